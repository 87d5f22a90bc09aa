/* reports.c: the shell commands that describe the system: ps (processes),
 * cores (cores and their processes), placement and stats (counts in use). Each prints a readable
 * table and one "@json" line per item for the tests and benchmarks. */
#include "shell.h"
#include <formica/json.h>
#include <formica/protocol/boot_servers.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

#define CORE_PIDS_LISTED 16 /* struct core_info carries the first 16 pids */

static struct process_info processes[PROCESS_LIST_MAX];
static struct core_info cores[FORMICA_MAX_CORES];

static const char *state_name(uint32_t state)
{
    switch (state) {
    case PROCESS_READY:
        return "ready";
    case PROCESS_RUNNING:
        return "running";
    case PROCESS_WAITING:
        return "waiting";
    case PROCESS_ZOMBIE:
        return "zombie";
    default:
        return "free";
    }
}

static const char *priority_name(uint32_t priority)
{
    return priority == PRIORITY_SERVER ? "server" : "application";
}

/* Fills `processes`; returns how many, or -1 after printing the error. */
static long load_processes(const char *command)
{
    long count = process_list(processes, PROCESS_LIST_MAX);
    if (count < 0)
        printf("%s: cannot list processes: %s\n", command, error_text(count));
    for (long i = 0; i < count; i++)
        processes[i].name[NAME_BYTES - 1] = '\0';
    return count;
}

static const char *process_name(long process_count, uint32_t pid)
{
    for (long i = 0; i < process_count; i++)
        if (processes[i].pid == pid)
            return processes[i].name;
    return "?";
}

/* The names of the RIGHT_* bits (formica/rights.h), by bit number. */
static const char *const right_names[] = {
    "file", "block",           "disk",      "pager", "kernel",        "statistics",  "test",
    NULL,   "server_priority", "power_off", "admin", "reserved_name", "new_account",
};

static void print_rights_json(uint32_t rights)
{
    printf("[");
    const char *separator = "";
    for (unsigned bit = 0; bit < sizeof(right_names) / sizeof(right_names[0]); bit++) {
        if (!(rights & (1u << bit)) || right_names[bit] == NULL)
            continue;
        printf("%s\"%s\"", separator, right_names[bit]);
        separator = ",";
    }
    printf("]");
}

static void print_process_json(const struct process_info *process)
{
    printf("@json {\"kind\":\"process\",\"pid\":%u,\"parent\":%u,\"core\":%u,\"state\":\"%s\","
           "\"priority\":\"%s\",\"cpu_cycles\":%lu,\"memory_bytes\":%lu,\"account\":%u,"
           "\"uid\":%u,\"gid\":%u,\"restarts\":%u,\"switches_in\":%u,\"control_icas\":%u,"
           "\"data_icas\":%u,\"block_icas\":%u,\"waits_for_ring_room\":%s,\"rights\":",
           process->pid, process->parent, process->core, state_name(process->state),
           priority_name(process->priority), process->cpu_cycles, process->memory_bytes,
           process->account, process->uid, process->gid, process->restarts, process->switches_in,
           process->control_icas, process->data_icas, process->block_icas,
           process->wait_reason == PROCESS_WAIT_ICA_ROOM ? "true" : "false");
    print_rights_json(process->rights);
    printf(",\"name\":");
    json_print_string(process->name);
    printf("}\n");
}

bool command_ps(int word_count, char **words)
{
    (void)word_count;
    (void)words;
    long count = load_processes("ps");
    if (count < 0)
        return false;
    printf("%5s %6s %4s %-8s %-11s %8s %10s %9s %7s %5s %8s  %s\n", "PID", "PARENT", "CORE",
           "STATE", "PRIORITY", "TICKS", "MCYCLES", "MEMORY", "ACCOUNT", "UID", "RESTARTS", "NAME");
    for (long i = 0; i < count; i++) {
        const struct process_info *process = &processes[i];
        printf("%5u %6u %4u %-8s %-11s %8lu %10lu %8luK %7u %5u %8u  %s\n", process->pid,
               process->parent, process->core, state_name(process->state),
               priority_name(process->priority), process->ticks, process->cpu_cycles / 1000000,
               process->memory_bytes / 1024, process->account, process->uid, process->restarts,
               process->name);
    }
    for (long i = 0; i < count; i++)
        print_process_json(&processes[i]);
    return true;
}

static uint32_t listed_pid_count(const struct core_info *core)
{
    return core->process_count < CORE_PIDS_LISTED ? core->process_count : CORE_PIDS_LISTED;
}

static void print_core_json(const struct core_info *core, long process_count)
{
    printf("@json {\"kind\":\"core\",\"id\":%u,\"apic\":%u,\"kernel\":\"%s\",\"socket\":%u,"
           "\"online\":%s,\"idle_cycles\":%lu,\"cr3_writes\":%lu,\"cr3_kept\":%lu,"
           "\"stale_faults\":%lu,\"device_interrupts\":%lu,\"system_calls\":%lu,\"procs\":[",
           core->id, core->apic_id, core->kernel == KERNEL_M ? "m" : "p", core->socket,
           core->online ? "true" : "false", core->idle_cycles, core->cr3_writes, core->cr3_kept,
           core->stale_faults, core->device_interrupts, core->system_calls);
    for (uint32_t i = 0; i < listed_pid_count(core); i++) {
        printf("%s{\"pid\":%u,\"name\":", i > 0 ? "," : "", core->pids[i]);
        json_print_string(process_name(process_count, core->pids[i]));
        putchar('}');
    }
    printf("]}\n");
}

static void print_core_row(const struct core_info *core, long process_count)
{
    printf("%4u %4u %6s %6u %6s %9lu %9lu  ", core->id, core->apic_id,
           core->kernel == KERNEL_M ? "m" : "p", core->socket, core->online ? "yes" : "no",
           core->ipis_sent, core->ipis_received);
    for (uint32_t i = 0; i < listed_pid_count(core); i++)
        printf("%s%s(%u)", i > 0 ? " " : "", process_name(process_count, core->pids[i]),
               core->pids[i]);
    if (core->process_count > CORE_PIDS_LISTED)
        printf(" +%u more", core->process_count - CORE_PIDS_LISTED);
    putchar('\n');
}

bool command_cores(int word_count, char **words)
{
    (void)word_count;
    (void)words;
    long process_count = load_processes("cores");
    long core_count = core_list(cores, FORMICA_MAX_CORES);
    if (core_count < 0) {
        printf("cores: cannot list cores: %s\n", error_text(core_count));
        return false;
    }
    if (process_count < 0)
        process_count = 0; /* names show as "?" */
    printf("%4s %4s %6s %6s %6s %9s %9s  %s\n", "CORE", "APIC", "KERNEL", "SOCKET", "ONLINE",
           "IPIS-SENT", "IPIS-RECV", "PROCESSES");
    for (long i = 0; i < core_count; i++)
        print_core_row(&cores[i], process_count);
    for (long i = 0; i < core_count; i++)
        print_core_json(&cores[i], process_count);
    return true;
}

static uint32_t application_core_count(const struct placement_info *placement)
{
    return placement->app_core_count < PLACEMENT_MAX_APP_CORES ? placement->app_core_count
                                                               : PLACEMENT_MAX_APP_CORES;
}

static uint32_t instance_count(const struct placement_info *placement, int server)
{
    uint32_t count = placement->server_instance_count[server];
    return count < SERVER_INSTANCES_MAX ? count : SERVER_INSTANCES_MAX;
}

/* "fs on core 1", or "fs on cores 1 5 9 (3 instances)"; nothing for an
 * optional server the placement does not start. */
static void print_server_cores(const struct placement_info *placement, int server,
                               const char **separator)
{
    uint32_t count = instance_count(placement, server);
    if (count == 0)
        return;
    printf("%s %s on core%s", *separator, boot_servers[server].name, count > 1 ? "s" : "");
    for (uint32_t index = 0; index < count; index++)
        printf(" %u", placement->server_instance_cores[server][index]);
    if (count > 1)
        printf(" (%u instances)", count);
    *separator = ",";
}

static void print_placement_summary(const struct placement_info *placement)
{
    printf("placement %s:", placement->name);
    const char *separator = "";
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        print_server_cores(placement, server, &separator);
    putchar('\n');
    printf("applications on cores");
    for (uint32_t i = 0; i < application_core_count(placement); i++)
        printf(" %u", placement->app_cores[i]);
    if (placement->app_spread)
        printf(" (spread; the first %u have no server)", placement->app_preferred_count);
    putchar('\n');
    if (placement->memnode_placed)
        printf("memory-node role on core %u\n", placement->memnode_core);
    if (placement->warnings > 0)
        printf("%u warning(s) in the placement file: the default is in effect\n",
               placement->warnings);
}

static void print_placement_json(const struct placement_info *placement)
{
    printf("@json {\"kind\":\"placement\",\"name\":");
    json_print_string(placement->name);
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        if (instance_count(placement, server) > 0)
            printf(",\"%s\":%u", boot_servers[server].name, placement->server_core[server]);
    printf(",\"instances\":{");
    const char *separator = "";
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        uint32_t count = instance_count(placement, server);
        if (count == 0)
            continue;
        printf("%s\"%s\":[", separator, boot_servers[server].name);
        for (uint32_t index = 0; index < count; index++)
            printf("%s%u", index > 0 ? "," : "", placement->server_instance_cores[server][index]);
        printf("]");
        separator = ",";
    }
    printf("},\"app_cores\":[");
    for (uint32_t i = 0; i < application_core_count(placement); i++)
        printf("%s%u", i > 0 ? "," : "", placement->app_cores[i]);
    printf("],\"spread\":%s", placement->app_spread ? "true" : "false");
    if (placement->memnode_placed)
        printf(",\"memnode\":%u", placement->memnode_core);
    printf(",\"warnings\":%u}\n", placement->warnings);
}

bool command_placement(int word_count, char **words)
{
    (void)word_count;
    (void)words;
    struct placement_info placement;
    long result = placement_get(&placement);
    if (result < 0) {
        printf("placement: %s\n", error_text(result));
        return false;
    }
    placement.name[NAME_BYTES - 1] = '\0';
    print_placement_summary(&placement);
    print_placement_json(&placement);
    return true;
}

/* stats: the kernel's counts of what is in use now (SYS_ICA_STATS): frames,
 * ICAs of each pool and process slots. A leak check compares two of these. */
bool command_stats(int word_count, char **words)
{
    (void)word_count, (void)words;
    struct ica_stats stats;
    long error = ica_stats(&stats);
    if (error != 0) {
        printf("stats: %s\n", error_text(error));
        return false;
    }
    uint32_t control = ICA_CONTROL_SLOTS - stats.control_free;
    uint32_t data = ICA_DATA_SLOTS - stats.data_free;
    uint32_t block = ICA_BLOCK_SLOTS - stats.block_free;
    uint64_t other = stats.frames_used - stats.table_frames - stats.ring_frames;
    printf("frames %lu of %lu in use (%lu page tables, %lu rings); ICAs: %u control, %u data, "
           "%u block; processes %u of %u\n",
           (unsigned long)stats.frames_used, (unsigned long)stats.frames_total,
           (unsigned long)stats.table_frames, (unsigned long)stats.ring_frames, control, data,
           block, stats.processes_used, stats.process_slots);
    printf("@json {\"kind\":\"stats\",\"frames_used\":%lu,\"frames_total\":%lu,"
           "\"table_frames\":%lu,\"ring_frames\":%lu,\"other_frames\":%lu,"
           "\"control_icas\":%u,\"data_icas\":%u,\"block_icas\":%u,\"processes\":%u}\n",
           (unsigned long)stats.frames_used, (unsigned long)stats.frames_total,
           (unsigned long)stats.table_frames, (unsigned long)stats.ring_frames,
           (unsigned long)other, control, data, block, stats.processes_used);
    return true;
}
