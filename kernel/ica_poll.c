/* ica_poll.c: the bounded poll before an ICA wait (ica_poll.h). It runs only
 * on a core whose run queue is empty, so it takes the core from nobody; each
 * turn is one look at the inbox hint and at `ready`, then a `pause`. */
#include "ica_poll.h"
#include "atomic.h"
#include "cpu.h"
#include "intercore.h"
#include "process.h"
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

bool ica_poll_before_wait(bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    if (!core_otherwise_idle(cpu))
        return false;
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
        if (ready())
            return true;
        if (rdtsc() - start >= bound)
            return false;
        cpu_relax();
    }
}
