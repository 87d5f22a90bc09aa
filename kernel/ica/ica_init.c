/* ica_init.c: the scheduler's hooks into ICA: after a halt the poll's bound
 * adapts (ica_poll_adapt), and an ending process closes its rendezvous words
 * before it becomes a zombie (ica_wait_close). */
#include "ica_init.h"
#include "cpu.h"
#include "ica_poll.h"
#include "ica_wait.h"
#include "process.h"
#include "scheduler.h"

/* A halt of `halted` cycles after a poll that gave up: the next poll's
 * bound adapts, when it may (ica_poll_max_us above ica_poll_us). */
static void after_halt(struct cpu *cpu, uint64_t halted)
{
    if (cpu->ica_poll_gave_up && cpu->ica_poll_most > cpu->ica_poll_least)
        ica_poll_adapt(cpu, halted);
}

void ica_init(void)
{
    /* before an exit: no sender on another core pastes into the process from now on */
    scheduler_set_hooks(
        (struct scheduler_hooks){.after_halt = after_halt, .before_exit = ica_wait_close});
}
