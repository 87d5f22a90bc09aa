/* account_charge_syscall.c: SYS_ACCOUNT_CHARGE on any core: the m-kernel,
 * which owns the process slots, checks the caller's right and the client's
 * quota (mkernel/account_charge.c). */
#include "cpu.h"
#include "intercore.h"
#include "mkernel_client.h"
#include "process.h"
#include <formica/protocol/syscall_table.h>

long sys_account_charge(uint32_t pid, int64_t bytes)
{
    struct intercore_message message = {
        .type = MESSAGE_ACCOUNT_CHARGE,
        .account_charge = {this_cpu()->current->pid, pid, bytes},
    };
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return reply.account_charge_reply.result;
}
