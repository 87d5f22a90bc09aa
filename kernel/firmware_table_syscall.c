/* firmware_table_syscall.c: SYS_FIRMWARE_TABLE, a copy of one ACPI table
 * (by its signature) into the caller's buffer. The tables live in the
 * m-kernel's memory map, so the copy is the m-kernel's; the caller's core
 * checks the buffer first. */
#include "cpu.h"
#include "mkernel_client.h"
#include "process.h"
#include "user_memory.h"
#include <formica/errors.h>
#include <formica/protocol/syscall_table.h>

long sys_firmware_table(uint32_t signature, uint64_t buffer, uint64_t size)
{
    struct process *caller = this_cpu()->current;
    if (!user_range_ok(caller->root, buffer, size, true))
        return -E_FAULT;
    struct intercore_message request = {
        .type = MESSAGE_FIRMWARE_TABLE,
        .firmware_table = {caller->pid, signature, buffer, size},
    };
    struct intercore_message reply;
    mkernel_request(&request, &reply);
    return reply.firmware_table_reply.result;
}
