/* server_syscalls.c: system calls 27, 28, 63 and 64: a server registers its
 * name as one of its instances (the m-kernel keeps the table), and clients
 * find the nearest instance, one by index, or every instance with the
 * requests each took (docs/ica.md, "Server instances"). */
#include "cpu.h"
#include "ica/ica.h"
#include "mkernel_client.h"
#include "process.h"
#include "scheduler.h"
#include "server_registry.h"
#include "user_memory.h"
#include <formica/errors.h>
#include <formica/syscalls.h>

static struct process *me(void)
{
    return this_cpu()->current;
}

/* The name at `user_name`, non-empty and shorter than SERVER_NAME_BYTES. */
static long copy_name(char name[SERVER_NAME_BYTES], uint64_t user_name)
{
    long length = copy_string_from_user(name, user_name, SERVER_NAME_BYTES);
    if (length < 0)
        return length;
    return length == 0 ? -E_INVALID : 0;
}

long sys_server_register(uint64_t user_name, uint32_t instance)
{
    char name[SERVER_NAME_BYTES];
    long error = copy_name(name, user_name);
    if (error != 0)
        return error;
    if (instance >= SERVER_INSTANCES_MAX)
        return -E_INVALID;
    struct intercore_message request = {
        .type = MESSAGE_SERVER_REGISTER,
        .server_register = {.pid = me()->pid, .name = (uint64_t)name, .instance = instance}};
    struct intercore_message reply;
    mkernel_request(&request, &reply);
    return reply.server_register_reply.result;
}

long sys_server_lookup(uint64_t user_name)
{
    char name[SERVER_NAME_BYTES];
    long error = copy_name(name, user_name);
    if (error != 0)
        return error == -E_INVALID ? -E_NOT_FOUND : error;
    uint32_t pid = server_pid_nearest(name, this_cpu()->index);
    return pid != 0 ? (long)pid : -E_NOT_FOUND;
}

long sys_server_lookup_instance(uint64_t user_name, uint32_t index)
{
    char name[SERVER_NAME_BYTES];
    long error = copy_name(name, user_name);
    if (error != 0)
        return error == -E_INVALID ? -E_NOT_FOUND : error;
    uint32_t pid = index < SERVER_INSTANCES_MAX ? server_pid_of_instance(name, index) : 0;
    return pid != 0 ? (long)pid : -E_NOT_FOUND;
}

long sys_server_instance_counts(uint64_t user_name, uint64_t buffer, uint64_t count)
{
    char name[SERVER_NAME_BYTES];
    long error = copy_name(name, user_name);
    if (error != 0)
        return error == -E_INVALID ? -E_NOT_FOUND : error;
    struct server_instance_info found[SERVER_INSTANCES_MAX];
    uint32_t room = count < SERVER_INSTANCES_MAX ? (uint32_t)count : SERVER_INSTANCES_MAX;
    uint32_t known = server_instances_describe(name, found, room);
    if (known == 0)
        return -E_NOT_FOUND;
    uint32_t filled = known < room ? known : room;
    error = copy_to_user(buffer, found, (size_t)filled * sizeof(found[0]));
    return error != 0 ? error : (long)filled;
}
