/* memory_report_syscall.c: SYS_MEMORY_REPORT on any core: the m-kernel, which
 * owns the frame allocator and the quota accounts, answers
 * (mkernel/memory_report.c); the caller's core copies the report out. */
#include "cpu.h"
#include "mkernel_client.h"
#include "process.h"
#include "user_memory.h"
#include <formica/errors.h>
#include <formica/protocol/syscall_table.h>

long sys_memory_report(uint64_t report)
{
    struct process *caller = this_cpu()->current;
    if (!user_range_ok(caller->root, report, sizeof(struct memory_report), true))
        return -E_FAULT;
    struct intercore_message request = {
        .type = MESSAGE_MEMORY_REPORT,
        .memory_report = {caller->pid},
    };
    struct intercore_message reply;
    mkernel_request(&request, &reply);
    struct memory_report answer = {
        .total = reply.memory_report_reply.total,
        .free = reply.memory_report_reply.free,
        .available = reply.memory_report_reply.available,
    };
    return copy_to_user(report, &answer, sizeof answer);
}
