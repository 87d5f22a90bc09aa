/* ica_poll.c: the bounded poll before an ICA wait (ica_poll.h). It runs only
 * on a core whose run queue is empty, so it takes the core from nobody; each
 * turn is one look at the inbox hint and at what the wait is for, then a
 * `pause`. */
#include "ica_poll.h"
#include "atomic.h"
#include "cpu.h"
#include "intercore.h"
#include "process.h"
#include "scheduler.h"
#include "shared.h"
#include "x86.h"

/* Nothing else could run here now: no process ready, none handed the core. */
static inline bool core_otherwise_idle(const struct cpu *cpu)
{
    return cpu->run_queue.ready_levels == 0 && cpu->handoff == NULL;
}

static inline uint64_t poll_bound_cycles(void)
{
    return kernel_shared->tsc_hz / 1000000 * ICA_POLL_MICROSECONDS;
}

/* The poll's turns: until `ready` holds or `polled` (when not NULL) is taken
 * to 0 by a sender; false when the bound passed or the core has something
 * else to run. */
static bool poll_turns(struct cpu *cpu, bool (*ready)(void), _Atomic uint64_t *polled)
{
    struct process *process = cpu->current;
    uint64_t start = rdtsc();
    uint64_t bound = poll_bound_cycles();
    for (;;) {
        if (atomic_load_acquire(&cpu->inbox_hint)) {
            intercore_drain();
            if (process->kill_requested)
                return true;
            if (!core_otherwise_idle(cpu))
                return ready();
        }
        if ((polled != NULL && atomic_load_acquire(polled) == 0) || ready())
            return true;
        if (rdtsc() - start >= bound)
            return false;
        cpu_relax();
    }
}

/* poll_turns with the core's `polling` announced: a sender that saw it sent
 * no IPI, so the messages that came meanwhile are served before the caller
 * goes on, and a process they made ready that outranks the caller runs
 * first (as that IPI would have had it). */
static bool poll_until(struct cpu *cpu, bool (*ready)(void), _Atomic uint64_t *polled)
{
    atomic_store_fenced(&cpu->polling, 1);
    bool came = poll_turns(cpu, ready, polled);
    atomic_store_fenced(&cpu->polling, 0);
    intercore_poll();
    struct process *process = cpu->current;
    if (came && run_queue_has_more_urgent(&cpu->run_queue, process->priority))
        scheduler_yield();
    return came || (polled != NULL && atomic_load_acquire(polled) == 0) || ready();
}

bool ica_poll_before_wait(bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    return core_otherwise_idle(cpu) && poll_until(cpu, ready, NULL);
}

bool ica_poll_for_result(uint64_t id, bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    if (!core_otherwise_idle(cpu))
        return false;
    struct process *process = cpu->current;
    atomic_store_fenced(&process->polled_result, id);
    poll_until(cpu, ready, &process->polled_result);
    uint64_t expected = id;
    /* Taken back unless a sender took it first: then the result is ours. */
    return !atomic_compare_swap(&process->polled_result, &expected, 0);
}
