/* ica_poll.c: the bounded poll before an ICA wait (ica_poll.h). It runs only
 * on a core whose run queue is empty, so it takes the core from nobody; each
 * turn looks at the inbox hint and at one word (a server's pushed count, a
 * requester's polled result), then runs `pause`. */
#include "ica_poll.h"
#include "atomic.h"
#include "cpu.h"
#include "ica.h"
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

/* The command line's ica_poll_us (default ICA_POLL_MICROSECONDS) in TSC
 * cycles, read once per core. */
static uint64_t read_poll_bound(struct cpu *cpu)
{
    uint64_t microseconds = command_line_number("ica_poll_us", ICA_POLL_MICROSECONDS);
    cpu->ica_poll_cycles = kernel_shared->tsc_hz / 1000000 * microseconds;
    cpu->ica_poll_read = 1;
    return cpu->ica_poll_cycles;
}

static inline uint64_t poll_bound_cycles(struct cpu *cpu)
{
    return cpu->ica_poll_read ? cpu->ica_poll_cycles : read_poll_bound(cpu);
}

/* The core may poll now: nothing else to run, and polls not turned off. */
static inline bool may_poll(struct cpu *cpu)
{
    return core_otherwise_idle(cpu) && poll_bound_cycles(cpu) != 0;
}

/* What a poll waits for: `*word` to differ from `value` (a sender on
 * another core writes it), or `ready` to hold after this core served its
 * inboxes (a message may have brought it). */
struct poll_watch {
    const _Atomic uint64_t *word;
    uint64_t value;
    bool (*ready)(void);
};

/* A process woken into poll_woken by another core runs next here: handed
 * the core (scheduler_hand_off), so when the poller blocks a moment later
 * (its poll ends, the core having something to run) it switches straight
 * to it, and when the poller goes on instead its system call's end makes
 * it ready, as its wake message would have (serve_process_wake). */
static void wake_poll_woken(struct cpu *cpu)
{
    uint32_t pid = atomic_swap(&cpu->poll_woken, 0);
    struct process *process = process_find(pid);
    if (process != NULL && process->core == cpu->index)
        scheduler_hand_off(process);
}

static inline void serve_poll_wake(struct cpu *cpu)
{
    if (atomic_load_acquire(&cpu->poll_woken))
        wake_poll_woken(cpu);
}

bool ica_poll_hand_wake(struct process *target)
{
    struct cpu *cpu = &kernel_shared->cpus[target->core];
    uint32_t expected = 0;
    if (!atomic_load_acquire(&cpu->polling) ||
        !atomic_compare_swap(&cpu->poll_woken, &expected, target->pid))
        return false;
    /* the exchange is locked, a full barrier: a poll still on now takes
     * the wake after it, at a turn or at its end (serve_poll_wake after
     * clearing `polling`) */
    if (atomic_load_acquire(&cpu->polling))
        return true;
    expected = target->pid;
    return !atomic_compare_swap(&cpu->poll_woken, &expected, 0); /* taken meanwhile: done */
}

/* The poll's cycles count as the core's idle time, as a halt's would, not
 * as the polling process's (its cpu_cycles run from cpu->switched_in).
 * Returns `came`. */
static inline bool count_as_idle(struct cpu *cpu, uint64_t start, bool came)
{
    uint64_t polled = rdtsc() - start;
    cpu->switched_in += polled;
    cpu->idle_cycles += polled;
    return came;
}

/* The poll's turns; false when the bound passed or the core has something
 * else to run. */
static inline __attribute__((always_inline)) bool poll_turns(struct cpu *cpu,
                                                             const struct poll_watch *watch)
{
    struct process *process = cpu->current;
    uint64_t start = rdtsc();
    uint64_t bound = cpu->ica_poll_cycles; /* read by may_poll */
    for (;;) {
        if (atomic_load_acquire(watch->word) != watch->value)
            break;
        if (atomic_load_acquire(&cpu->inbox_hint_or_woken)) {
            serve_poll_wake(cpu);
            intercore_poll();
            if (process->kill_requested || watch->ready())
                break;
            if (!core_otherwise_idle(cpu))
                return count_as_idle(cpu, start, false);
        }
        if (rdtsc() - start >= bound)
            return count_as_idle(cpu, start, false);
        cpu_relax();
    }
    return count_as_idle(cpu, start, true);
}

/* poll_turns with the core's `polling` announced: a sender that saw it sent
 * no IPI, so the messages that came meanwhile are served before the caller
 * goes on, and a process they made ready that outranks the caller runs
 * first (as that IPI would have had it). */
static inline __attribute__((always_inline)) bool poll_until(struct cpu *cpu,
                                                             const struct poll_watch *watch)
{
    atomic_store_fenced(&cpu->polling, 1);
    bool came = poll_turns(cpu, watch);
    atomic_store_fenced(&cpu->polling, 0);
    if (atomic_load_acquire(&cpu->inbox_hint_or_woken)) {
        serve_poll_wake(cpu);
        if (intercore_poll() > 0)
            came = came || watch->ready();
    }
    if (came && run_queue_has_more_urgent(&cpu->run_queue, cpu->current->priority))
        scheduler_yield();
    return came;
}

/* A word no sender writes: a poll on it waits for messages only. */
static const _Atomic uint64_t never_written;

bool ica_poll_before_wait(bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    struct poll_watch watch = {&never_written, 0, ready};
    return may_poll(cpu) && poll_until(cpu, &watch);
}

bool ica_poll_for_request(const struct server_entry *server, bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    struct poll_watch watch = {&server->pushed, server->taken, ready};
    return may_poll(cpu) && poll_until(cpu, &watch);
}

bool ica_poll_for_result(uint64_t id, bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    if (!may_poll(cpu))
        return false;
    struct process *process = cpu->current;
    struct poll_watch watch = {&process->polled_result, id, ready};
    atomic_store_fenced(&process->polled_result, id);
    poll_until(cpu, &watch);
    uint64_t expected = id;
    /* Taken back unless a sender took it first: then the result is ours. */
    return !atomic_compare_swap(&process->polled_result, &expected, 0);
}
