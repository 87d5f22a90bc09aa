/* crash.c: SYS_CRASH, the administrator's way to test recovery: the target
 * process is made to execute a faulting instruction (a jump to address 0,
 * as a null function pointer would), so it dies through the ordinary fault
 * path (report, exit code 128 + 14) and not by a kill. Only a process with
 * RIGHT_ADMIN (init and the console shell, docs/authority.md) may do it. */
#include "crash.h"
#include "cpu.h"
#include "device_state.h"
#include "process.h"
#include "scheduler.h"
#include "trap.h"
#include <formica/errors.h>
#include <formica/rights.h>
#include "intercore.h"
#include <formica/protocol/syscall_table.h>

#define CRASH_ADDRESS 0ull /* never mapped: user space starts at USER_SPACE_START */

void trap_return(void);

static bool is_administrator(const struct process *process)
{
    return (process->rights & RIGHT_ADMIN) != 0;
}

long sys_crash(uint32_t pid)
{
    struct process *me = this_cpu()->current;
    if (!is_administrator(me))
        return -E_PERMISSION;
    struct process *target = process_find(pid);
    if (target == NULL || target->state == PROCESS_ZOMBIE)
        return -E_NOT_FOUND;
    if (pid == 1 || target == me)
        return -E_PERMISSION;
    /* Delivered as a kill (which wakes it from any wait); the kill turns
     * into the fault in crash_if_requested. */
    __atomic_store_n(&target->crash_requested, 1, __ATOMIC_RELEASE);
    scheduler_send_to_owner(MESSAGE_PROCESS_KILL, target);
    return 0;
}

/* Leaves the kernel for user mode through the trap frame at the top of the
 * process's kernel stack, dropping whatever the kernel was doing for it. */
static __attribute__((noreturn)) void return_to_user(struct trap_frame *frame)
{
    __asm__ volatile("movq %0, %%rsp\n\tjmp trap_return" : : "r"(frame) : "memory");
    __builtin_unreachable();
}

void crash_if_requested(struct process *process, int32_t code)
{
    if (code != PROCESS_EXIT_KILLED ||
        !__atomic_exchange_n(&process->crash_requested, 0, __ATOMIC_ACQ_REL))
        return;
    process->kill_requested = 0;
    struct trap_frame *frame = (struct trap_frame *)process_kernel_stack_top(process) - 1;
    if ((frame->cs & 3) != 3)
        return; /* no user frame to resume: it is killed instead */
    frame->rip = CRASH_ADDRESS;
    return_to_user(frame);
}
