/* reincarnation.c: init's servers and their restarts (reincarnation.h). A
 * server runs as one process per instance the placement gives it, each
 * started with --instance I/N when there are several (formica/instance.h).
 * An instance's death is noticed the moment its process ends, however it
 * ended (killed, faulted, exited); init waits until the kernel has released
 * the old process's instance of the name, then starts that instance alone
 * again on the same core with the same arguments and its restart count
 * raised; the other instances go on serving. Requests that were in flight went back to their
 * requesters with -E_SERVER_ENDED; the request library retries them with
 * the new server (docs/recovery.md). */
#include "reincarnation.h"
#include <formica/device.h>
#include <formica/instance.h>
#include <formica/protocol/boot_servers.h>
#include <formica/request.h>
#include <formica/rights.h>
#include <formica/user.h>
#include <formica/users.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NAME_RELEASE_WAIT_MS 5000 /* the m-kernel frees the old name just after the exit */

/* One server instance's running state; what the server is (program,
 * rights, spawn flags, restart limit) is its entry in boot_servers,
 * generated from the server lines of protocol/NAME.messages (what each may
 * do: docs/authority.md). */
struct server_record {
    const struct boot_server *declared;
    struct server_instance instance;
    uint32_t core;
    long pid; /* the running incarnation, or < 0 */
    uint32_t restarts;
};

static struct server_record servers[PLACEMENT_SERVERS][SERVER_INSTANCES_MAX];
static uint32_t instance_counts[PLACEMENT_SERVERS];

/* "fs" for a lone server, "fs 1/4" for an instance. */
static const char *label_of(const struct server_record *server)
{
    static char label[NAME_BYTES + 16];
    if (server->instance.count <= 1)
        snprintf(label, sizeof label, "%s", server->declared->name);
    else
        snprintf(label, sizeof label, "%s %u/%u", server->declared->name, server->instance.index,
                 server->instance.count);
    return label;
}

static long spawn_server(struct server_record *server)
{
    struct spawn_request request = {.core = server->core,
                                    .priority = PRIORITY_SERVER,
                                    .flags = server->declared->flags | SPAWN_SET_USER,
                                    .rights = server->declared->rights,
                                    .restarts = server->restarts,
                                    .uid = server->declared->user,
                                    .gid = server->declared->user};
    strncpy(request.program, server->declared->name, NAME_BYTES - 1);
    if (server->instance.count > 1 &&
        server_instance_argument(server->instance, request.arguments, ARGUMENTS_BYTES) < 0)
        return server->pid = -E_TOO_BIG; /* not reached: the argument is a few bytes */
    server->pid = syscall6(SYS_SPAWN, (long)&request, 0, 0, 0, 0, 0);
    if (server->pid < 0)
        printf("init: cannot start %s on core %u: %s\n", label_of(server), server->core,
               error_text(server->pid));
    return server->pid;
}

void servers_start(const struct placement_info *placement)
{
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        uint32_t count = placement->server_instance_count[server];
        instance_counts[server] = count <= SERVER_INSTANCES_MAX ? count : SERVER_INSTANCES_MAX;
        for (uint32_t index = 0; index < instance_counts[server]; index++) {
            struct server_record *record = &servers[server][index];
            *record = (struct server_record){
                .declared = &boot_servers[server],
                .instance = {.index = index, .count = instance_counts[server]},
                .core = placement->server_instance_cores[server][index]};
            spawn_server(record);
        }
    }
}

/* Waits (bounded) until the instance of the name no longer belongs to the
 * ended process, so the new one can register it. */
static void wait_for_name_release(const char *name, uint32_t index, long old_pid)
{
    for (uint32_t waited = 0; waited < NAME_RELEASE_WAIT_MS; waited += 5) {
        if (server_lookup_instance(name, index) != old_pid)
            return;
        sleep_ms(5);
    }
    printf("init: %s %u (pid %ld) still holds its name; restarting anyway\n", name, index, old_pid);
}

/* The record of the instance whose process is `pid`, or NULL. */
static struct server_record *record_of(long pid)
{
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        for (uint32_t index = 0; index < instance_counts[server]; index++)
            if (servers[server][index].pid == pid)
                return &servers[server][index];
    return NULL;
}

bool servers_child_ended(long pid, int code)
{
    struct server_record *server = pid > 0 ? record_of(pid) : NULL;
    if (server == NULL)
        return false;
    server->pid = -1;
    const char *name = server->declared->name;
    uint32_t index = server->instance.index;
    if (server->restarts >= server->declared->restart_limit) {
        printf("init: %s (pid %ld) ended with code %d; restarted %u times, giving up\n",
               label_of(server), pid, code, server->restarts);
        return true;
    }
    wait_for_name_release(name, index, pid);
    server->restarts++;
    long new_pid = spawn_server(server);
    printf("init: %s (pid %ld) ended with code %d; restarted on core %u as pid %ld\n",
           label_of(server), pid, code, server->core, new_pid);
    printf("@json {\"kind\":\"server_restart\",\"server\":\"%s\",\"instance\":%u,"
           "\"instances\":%u,\"old_pid\":%ld,\"exit_code\":%d,\"pid\":%ld,\"core\":%u,"
           "\"restarts\":%u}\n",
           name, index, server->instance.count, pid, code, new_pid, server->core, server->restarts);
    return true;
}

void servers_restart_ended(void)
{
    static struct process_info list[PROCESS_LIST_MAX];
    long count = process_list(list, PROCESS_LIST_MAX);
    for (long i = 0; i < count; i++) {
        if (list[i].state != PROCESS_ZOMBIE || list[i].parent != (uint32_t)process_id())
            continue;
        int code = -1;
        long pid = list[i].pid;
        if (wait_process(pid, &code) == pid && !servers_child_ended(pid, code))
            printf("init: process %ld ended with code %d\n", pid, code);
    }
}

uint32_t servers_restart_count(enum placement_server server)
{
    uint32_t restarts = 0;
    for (uint32_t index = 0; index < instance_counts[server]; index++)
        restarts += servers[server][index].restarts;
    return restarts;
}
