/* servers_report.c: the shell's `servers [NAME...]`: every instance of each
 * server (the boot servers the placement starts, or the names given) with
 * its core, pid, how often it registered and the requests it has taken
 * (SYS_SERVER_INSTANCE_COUNTS), as a table and one "@json" line each. */
#include "shell.h"
#include <formica/instance.h>
#include <formica/protocol/boot_servers.h>
#include <formica/user.h>
#include <stdio.h>

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

/* One name's instances; false when it has none. */
static bool report_server(const char *name)
{
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
    bool ok = true;
    for (int i = 1; i < word_count; i++)
        ok = report_server(words[i]) && ok;
    if (word_count > 1)
        return ok;
    struct placement_info placement;
    long error = placement_get(&placement);
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        if (error < 0 || placement.server_instance_count[server] > 0)
            ok = report_server(boot_servers[server].name) && ok;
    return ok;
}
