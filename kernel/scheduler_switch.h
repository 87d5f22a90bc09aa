/* scheduler_switch.h: the steps of giving a core from one process to
 * another (address space, kernel stack, FPU state, cycles, the wait's
 * bookkeeping), inline: the scheduler's loop and direct switch, and the ICA
 * fast path's switch into a process parked in a system call, share them. */
#pragma once
#include "cpu.h"
#include "fpu.h"
#include "process.h"
#include "profile_mark.h"
#include "trap.h"
#include "translation_stamp.h"
#include "x86.h"
#include <stdbool.h>
#include <stdint.h>

/* context_switch.S: saves as switch_context does, then leaves through
 * syscall_exit with the system-call frame at `frame`. */
void switch_to_system_call_exit(uint64_t *save_rsp, struct trap_frame *frame);

/* A process blocked until a tick: a sleep, or an irq_wait with a timeout. */
static inline bool is_sleeper(uint32_t reason, uint64_t wake_tick)
{
    return reason == WAIT_SLEEP || (reason == WAIT_IRQ && wake_tick != 0);
}

/* The process becomes the core's running one: address space, kernel stack. */
static inline __attribute__((always_inline)) void install(struct cpu *cpu, struct process *process)
{
    cpu->current = process;
    process->state = PROCESS_RUNNING;
    cpu->kernel_stack_top = process_kernel_stack_top(process);
    cpu->tss.rsp[0] = cpu->kernel_stack_top;
    translations_load(cpu, process);
    process->switches_in++;
    profile_mark_running(process->pid);
}

/* The running process's state goes into the core (address space, kernel
 * stack, FPU) and its cycles start counting. */
static inline __attribute__((always_inline)) void switch_in(struct cpu *cpu,
                                                            struct process *process)
{
    install(cpu, process);
    fpu_restore(process->fpu_state);
    cpu->switched_in = rdtsc();
}

static inline __attribute__((always_inline)) void switch_out(struct cpu *cpu,
                                                             struct process *process)
{
    process->cpu_cycles += rdtsc() - cpu->switched_in;
    fpu_save(process->fpu_state);
}

/* switch_out of `from` and switch_in of `next` in one: one time stamp ends
 * the one's cycles and starts the other's, one step swaps the FPU state. */
static inline __attribute__((always_inline)) void
switch_between(struct cpu *cpu, struct process *from, struct process *next)
{
    uint64_t now = rdtsc();
    from->cpu_cycles += now - cpu->switched_in;
    cpu->switched_in = now;
    fpu_switch(from->fpu_state, next->fpu_state);
    install(cpu, next);
}

static inline __attribute__((always_inline)) void mark_waiting(struct process *process,
                                                               uint32_t reason, uint64_t wake_tick)
{
    process->state = PROCESS_WAITING;
    process->wait_reason = reason;
    process->wake_tick = wake_tick;
    if (is_sleeper(reason, wake_tick)) {
        struct cpu *cpu = this_cpu();
        cpu->sleepers++;
        if (wake_tick < cpu->next_wake_tick)
            cpu->next_wake_tick = wake_tick;
    }
}

/* The running process blocks for an ICA (WAIT_ICA, or WAIT_SLEEP until
 * `wake_tick` when it is not 0) and `next`, checked with
 * scheduler_may_switch_directly and parked in a system call, returns from
 * that call at once: straight to user mode with `frame`, its system-call
 * frame (the frames of the call it was parked in are dropped). Returns when
 * the running process is woken the ordinary way. */
static inline __attribute__((always_inline)) void
scheduler_block_and_return_to(uint64_t wake_tick, struct process *next, struct trap_frame *frame)
{
    struct cpu *cpu = this_cpu();
    struct process *process = cpu->current;
    if (wake_tick != 0)
        mark_waiting(process, WAIT_SLEEP, wake_tick);
    else
        mark_waiting(process, WAIT_ICA, 0);
    if (is_sleeper(next->wait_reason, next->wake_tick))
        cpu->sleepers--;
    next->wait_reason = WAIT_NONE;
    switch_between(cpu, process, next);
    switch_to_system_call_exit(&process->saved_rsp, frame);
}
