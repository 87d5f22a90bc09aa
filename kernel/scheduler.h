/* scheduler.h: each core's scheduler. A core runs its ready processes by
 * strict priority (servers before applications); servers round robin,
 * applications fair between accounts (the least-used account's next, and a
 * woken application of an account that used less takes the core); time
 * slices come from the LAPIC timer; blocked processes wait in
 * PROCESS_WAITING until a message or a deadline makes them ready. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "cpu.h"
#include "process.h"
#include "run_queue.h"
#include "trap.h"

_Static_assert(RUN_QUEUE_CAPACITY == PROCESS_SLOTS, "every process fits in a run queue");
_Static_assert(RUN_QUEUE_LEVELS == PRIORITY_LEVELS, "one run queue per priority level");
_Static_assert(RUN_QUEUE_SERVERS == PRIORITY_SERVER &&
                   RUN_QUEUE_APPLICATIONS == PRIORITY_APPLICATION,
               "the run queue's levels are the priorities");

#define TIME_SLICE_TICKS 2

/* Prepares this core's queues and handlers; then scheduler_run never returns. */
void scheduler_init(void);
/* What the scheduler tells the layers above it, through functions they
 * register once per kernel image before any process runs: the core is idle
 * and about to halt (the inter-core self-test's pending part, registered by
 * each kernel's main), the core halted `halted` TSC cycles waiting for work
 * (the ICA wing's ica_init), a process is about to exit with a code (a
 * pending SYS_CRASH, registered by each kernel's main: returns unless it
 * turns the exit into a fault), and a process is about to become a zombie
 * (ica_init). The scheduler includes and calls nothing of those layers
 * itself (kernel/ica/layers, build/kernel-circles). */
struct scheduler_hooks {
    void (*before_halt)(void);
    void (*after_halt)(struct cpu *cpu, uint64_t halted);
    void (*on_exit)(struct process *process, int32_t code);
    void (*before_exit)(struct process *process);
};
/* Sets the hooks given (not NULL); those left NULL keep what they were. */
void scheduler_set_hooks(struct scheduler_hooks hooks);
void scheduler_run(void) __attribute__((noreturn));
/* Takes a process created by the m-kernel for this core and makes it ready. */
void scheduler_adopt(struct process *process);
/* Makes a waiting process of this core ready (it re-checks why it waited). */
void scheduler_wake(struct process *process);
/* `process` (waiting on this core, just given work by the running process,
 * which is about to block) runs next, directly, when that process blocks;
 * the flush makes a pending one ready the ordinary way instead. */
void scheduler_hand_off(struct process *process);
void scheduler_hand_off_flush(void);
/* The running process waits at least `milliseconds` (one tick at least); a
 * kill asked for meanwhile ends it (SYS_SLEEP, a pager's restart wait). */
void scheduler_sleep(uint64_t milliseconds);
/* The running process gives up the core; its state says whether it stays ready. */
void scheduler_yield(void);
/* The running process blocks for `reason` (until woken, or until `wake_tick`). */
void scheduler_block(uint32_t reason, uint64_t wake_tick);
/* Whether `next` (waiting on this core) may run at once, bypassing the
 * scheduler: nothing more urgent is ready, no tick or message waits to be
 * served, no hand-off is pending, and it is not being killed. */
static inline bool scheduler_may_switch_directly(const struct process *next)
{
    struct cpu *cpu = this_cpu();
    return next->core == cpu->index && next->state == PROCESS_WAITING && !next->end_requested &&
           cpu->handoff == NULL && !cpu->tick_unserved &&
           !__atomic_load_n(&cpu->inbox_hint, __ATOMIC_ACQUIRE) &&
           !run_queue_has_more_urgent(&cpu->run_queue, next->priority);
}
/* Ends the running process with `code`; never returns. */
void scheduler_exit_current(int32_t code) __attribute__((noreturn));
/* Interrupt from user mode: preempt if a more urgent process is ready or the slice is used up. */
void scheduler_preempt_check(struct trap_frame *frame, int tick);
/* Whether waking `process` on its (other) core must interrupt that core:
 * only when it outranks what runs there. A halted core is woken by the
 * inter-core layer anyway; a busy one finds the message at its next poll. */
bool scheduler_must_interrupt(const struct process *process);
/* Sends `type` about process `pid` to the core that owns it (or handles it here). */
void scheduler_send_to_owner(uint32_t type, struct process *process);
