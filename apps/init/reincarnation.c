/* reincarnation.c: init's servers and their restarts (reincarnation.h). A
 * server's death is noticed the moment its process ends, however it ended
 * (killed, faulted, exited); init waits until the kernel has released the
 * old process's name, then starts the program again on the same core with
 * the restart count raised. Requests that were in flight went back to their
 * requesters with -E_SERVER_ENDED; the request library retries them with
 * the new server (docs/recovery.md). */
#include "reincarnation.h"
#include <formica/device.h>
#include <formica/protocol/boot_servers.h>
#include <formica/request.h>
#include <formica/rights.h>
#include <formica/user.h>
#include <formica/users.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NAME_RELEASE_WAIT_MS 5000 /* the m-kernel frees the old name just after the exit */

/* One server's running state; what it is (program, rights, spawn flags,
 * restart limit) is its entry in boot_servers, generated from the server
 * lines of protocol/NAME.messages (what each may do: docs/authority.md). */
struct server_record {
    const struct boot_server *declared;
    uint32_t core;
    long pid; /* the running incarnation, or < 0 */
    uint32_t restarts;
};

static struct server_record servers[PLACEMENT_SERVERS];

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
    server->pid = syscall6(SYS_SPAWN, (long)&request, 0, 0, 0, 0, 0);
    if (server->pid < 0)
        printf("init: cannot start %s on core %u: %s\n", server->declared->name, server->core,
               error_text(server->pid));
    return server->pid;
}

void servers_start(const struct placement_info *placement)
{
    for (int index = 0; index < PLACEMENT_SERVERS; index++) {
        servers[index] = (struct server_record){.declared = &boot_servers[index],
                                                .core = placement->server_core[index]};
        spawn_server(&servers[index]);
    }
}

/* Waits (bounded) until the name no longer belongs to the ended process,
 * so the new one can register it. */
static void wait_for_name_release(const char *name, long old_pid)
{
    for (uint32_t waited = 0; waited < NAME_RELEASE_WAIT_MS; waited += 5) {
        if (server_lookup(name) != old_pid)
            return;
        sleep_ms(5);
    }
    printf("init: %s (pid %ld) still holds its name; restarting anyway\n", name, old_pid);
}

bool servers_child_ended(long pid, int code)
{
    for (int index = 0; index < PLACEMENT_SERVERS; index++) {
        struct server_record *server = &servers[index];
        if (server->declared == NULL || server->pid != pid)
            continue;
        server->pid = -1;
        const char *name = server->declared->name;
        if (server->restarts >= server->declared->restart_limit) {
            printf("init: %s (pid %ld) ended with code %d; restarted %u times, giving up\n", name,
                   pid, code, server->restarts);
            return true;
        }
        wait_for_name_release(name, pid);
        server->restarts++;
        long new_pid = spawn_server(server);
        printf("init: %s (pid %ld) ended with code %d; restarted on core %u as pid %ld\n", name,
               pid, code, server->core, new_pid);
        printf("@json {\"kind\":\"server_restart\",\"server\":\"%s\",\"old_pid\":%ld,"
               "\"exit_code\":%d,\"pid\":%ld,\"core\":%u,\"restarts\":%u}\n",
               name, pid, code, new_pid, server->core, server->restarts);
        return true;
    }
    return false;
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
    return servers[server].restarts;
}
