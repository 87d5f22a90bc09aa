/* servers_report.c: the shell's `servers [NAME...]`: every instance of each
 * server (the boot servers the placement starts, or the names given) with
 * its core, pid, how often it registered and the requests it has taken
 * (SYS_SERVER_INSTANCE_COUNTS), as a table and one "@json" line each. A
 * boot server's instances that are still starting are waited for. */
#include "shell.h"
#include <formica/instance.h>
#include <formica/protocol/boot_servers.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

static struct server_instance_info instances[SERVER_INSTANCES_MAX];

static void print_instance(const char *name, const struct server_instance_info *instance,
                           long count)
{
    printf("%-8s %3u/%-3ld %4u %6u %10u %12lu\n", name, instance->index, count, instance->core,
           instance->pid, instance->registered, instance->taken);
    printf("@json {\"kind\":\"server_instance\",\"server\":\"%s\",\"index\":%u,\"instances\":%ld,"
           "\"core\":%u,\"pid\":%u,\"registered\":%u,\"taken\":%lu}\n",
           name, instance->index, count, instance->core, instance->pid, instance->registered,
           instance->taken);
}

/* Waits (bounded) until every instance the placement gives `name` has
 * registered, when it is a boot server the placement starts. */
static void wait_for_boot_instances(const char *name, const struct placement_info *placement)
{
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        if (strcmp(name, boot_servers[server].name) != 0)
            continue;
        uint32_t count = placement->server_instance_count[server];
        for (uint32_t index = 0; index < count && index < SERVER_INSTANCES_MAX; index++)
            server_wait_for_instance(name, index, SERVER_START_WAIT_MS);
    }
}

/* One name's instances; false when it has none. */
static bool report_server(const char *name, const struct placement_info *placement)
{
    if (placement != NULL)
        wait_for_boot_instances(name, placement);
    long count = server_instance_counts(name, instances, SERVER_INSTANCES_MAX);
    if (count < 0) {
        printf("servers: %s: %s\n", name, error_text(count));
        return false;
    }
    for (long i = 0; i < count && i < SERVER_INSTANCES_MAX; i++)
        print_instance(name, &instances[i], count);
    return true;
}

bool command_servers(int word_count, char **words)
{
    printf("%-8s %7s %4s %6s %10s %12s\n", "SERVER", "INST", "CORE", "PID", "REGISTERED", "TAKEN");
    static struct placement_info placement;
    bool placed = placement_get(&placement) >= 0;
    bool ok = true;
    for (int i = 1; i < word_count; i++)
        ok = report_server(words[i], placed ? &placement : NULL) && ok;
    if (word_count > 1)
        return ok;
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        if (!placed || placement.server_instance_count[server] > 0)
            ok = report_server(boot_servers[server].name, placed ? &placement : NULL) && ok;
    return ok;
}
