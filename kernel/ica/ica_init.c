/* ica_init.c: the scheduler's hooks into ICA: after a halt the poll's bound
 * adapts (ica_poll_adapt), and an ending process closes its rendezvous words
 * (ica_wait_close) and ends its mapping lends before it becomes a zombie. */
#include "ica_init.h"
#include "atomic.h"
#include "cpu.h"
#include "ica_poll.h"
#include "ica_wait.h"
#include "mapping_lend.h"
#include "process.h"
#include "scheduler.h"

/* A halt of `halted` cycles after a poll that gave up: the next poll's
 * bound adapts, when it may (ica_poll_max_us above ica_poll_us). */
static void after_halt(struct cpu *cpu, uint64_t halted)
{
    if (cpu->ica_poll_gave_up && cpu->ica_poll_most > cpu->ica_poll_least)
        ica_poll_adapt(cpu, halted);
}

/* Before an exit: no sender on another core pastes into the process from
 * now on, and its mapping lends end on its own core, before its parent is
 * woken (the m-kernel's release after the switch out would end them only
 * later: a lent count taken right after the exit could still see them). */
static void ica_before_exit(struct process *process)
{
    ica_wait_close(process);
    if (atomic_load_acquire(&process->mapping_lends) > 0)
        mapping_lends_end(process, 0, UINT64_MAX);
}

void ica_init(void)
{
    scheduler_set_hooks(
        (struct scheduler_hooks){.after_halt = after_halt, .before_exit = ica_before_exit});
}
