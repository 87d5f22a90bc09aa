/* kept_region_syscall.c: SYS_KEPT_REGION on any core: copies the name in
 * and asks the m-kernel, which owns the frames (mkernel/kept_regions.c). */
#include "cpu.h"
#include "intercore.h"
#include "mkernel_client.h"
#include "process.h"
#include "user_memory.h"
#include <formica/kept_region.h>
#include <formica/protocol/syscall_table.h>

long sys_kept_region(uint64_t user_name, uint64_t bytes)
{
    char name[KEPT_NAME_BYTES];
    long error = copy_string_from_user(name, user_name, sizeof(name));
    if (error < 0)
        return error;
    struct intercore_message message = {
        .type = MESSAGE_KEPT_REGION,
        .kept_region = {(uint64_t)name, this_cpu()->current->pid, bytes},
    };
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return reply.kept_region_reply.address;
}
