/* published_region_syscall.c: SYS_PUBLISHED_REGION on any core: copies the
 * name in and asks the m-kernel, which owns the frames
 * (mkernel/published_regions.c). */
#include "cpu.h"
#include "intercore.h"
#include "mkernel_client.h"
#include "process.h"
#include "user_memory.h"
#include <formica/errors.h>
#include <formica/protocol/syscall_table.h>
#include <formica/published_region.h>

long sys_published_region(uint64_t user_name, uint64_t bytes)
{
    char name[PUBLISHED_NAME_BYTES];
    long length = copy_string_from_user(name, user_name, sizeof(name));
    if (length < 0)
        return length;
    if (length == 0)
        return -E_INVALID;
    struct intercore_message message = {
        .type = MESSAGE_PUBLISHED_REGION,
        .published_region = {(uint64_t)name, this_cpu()->current->pid, bytes},
    };
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return reply.published_region_reply.address;
}
