/* ica_poll.c: the bounded poll before an ICA wait (ica_poll.h). It runs only
 * on a core whose run queue is empty, so it takes the core from nobody; each
 * turn looks at the inbox hint and at one word (a server's pushed count, a
 * requester's polled result), then runs `pause`. */
#include "ica_poll.h"
#include "atomic.h"
#include "cpu.h"
#include "ica.h"
#include "intercore.h"
#include "poll_bound.h"
#include "process.h"
#include "scheduler.h"
#include "shared.h"
#include "x86.h"

/* The command line's ica_poll_us and ica_poll_max_us (defaults
 * ICA_POLL_MICROSECONDS, ICA_POLL_MAX_MICROSECONDS) in TSC cycles, read
 * once per core; the first poll's bound is the least. */
uint64_t ica_poll_read_bound(struct cpu *cpu)
{
    uint64_t cycles_per_us = kernel_shared->tsc_hz / 1000000;
    uint64_t least = command_line_number("ica_poll_us", ICA_POLL_MICROSECONDS);
    uint64_t most = command_line_number("ica_poll_max_us", ICA_POLL_MAX_MICROSECONDS);
    cpu->ica_poll_least = cycles_per_us * least;
    cpu->ica_poll_most = cycles_per_us * (most > least ? most : least);
    cpu->ica_poll_cycles = cpu->ica_poll_least;
    cpu->ica_poll_read = 1;
    return cpu->ica_poll_cycles;
}

void ica_poll_adapt(struct cpu *cpu, uint64_t halted)
{
    cpu->ica_poll_gave_up = 0;
    cpu->ica_poll_cycles = poll_bound_after_halt(cpu->ica_poll_cycles, halted, cpu->ica_poll_least,
                                                 cpu->ica_poll_most);
}

/* A process woken into poll_woken by another core runs next here: handed
 * the core (scheduler_hand_off), so when the poller blocks a moment later
 * (its poll ends, the core having something to run) it switches straight
 * to it, and when the poller goes on instead its system call's end makes
 * it ready, as its wake message would have (serve_process_wake). */
void ica_poll_hand_server(struct cpu *cpu, uint32_t pid)
{
    struct process *process = process_find(pid);
    if (process != NULL && process->core == cpu->index)
        scheduler_hand_off(process);
}

void ica_poll_wake_woken(struct cpu *cpu)
{
    ica_poll_hand_server(cpu, ica_core_take_woken(cpu));
}

/* A word no sender writes: a poll on it waits for messages only. */
static const _Atomic uint64_t never_written;

bool ica_poll_before_wait(bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    struct ica_poll_watch watch = {&never_written, 0, ready};
    return ica_may_poll(cpu) && ica_poll_until(cpu, &watch);
}
