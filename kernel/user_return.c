/* user_return.c: what happens to a process whose way back to user mode
 * would land at or above USER_SPACE_END (user_return.h): it ends there,
 * with a report, instead of a `sysret` or `iretq` to that address, which
 * on Intel CPUs faults in ring 0 (sysret to a non-canonical RCX) or after
 * the `swapgs` (iretq). A program reaches it by jumping to syscall_entry
 * with such an RCX (syscall_entry_fault takes the call); the other paths
 * (first entry, a crash, a resumed fault) set addresses the kernel chose. */
#include "user_return.h"
#include "console.h"
#include "cpu.h"
#include "process.h"
#include "scheduler.h"

#define VECTOR_GENERAL_PROTECTION 13

void user_return_refused(struct trap_frame *frame)
{
    struct cpu *cpu = this_cpu();
    struct process *process = cpu->current;
    kprintf("core %u: process '%s' (pid %u) killed: return address 0x%lx is not a user address "
            "(at or above 0x%lx)\n",
            cpu->index, process->name, process->pid, frame->rip, (uint64_t)USER_SPACE_END);
    scheduler_exit_current(PROCESS_EXIT_FAULT_BASE + VECTOR_GENERAL_PROTECTION);
    __builtin_unreachable();
}
