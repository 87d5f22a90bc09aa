/* process.c: looking up processes in the shared table. */
#include "process.h"
#include "account_memory.h"
#include "shared.h"
#include "cpu.h"
#include "x86.h"
#include <string.h>

/* The cycles of the span `process` holds its core now (0 unless it runs):
 * a server that polls for its next request may not switch out for long. */
static uint64_t running_span_cycles(const struct process *process)
{
    const struct cpu *cpu = &kernel_shared->cpus[process->core];
    if (process->state != PROCESS_RUNNING || cpu->current != process)
        return 0;
    uint64_t since = cpu->switched_in, now = rdtsc();
    return now > since ? now - since : 0;
}

void process_describe(const struct process *process, struct process_info *info)
{
    memset(info, 0, sizeof(*info));
    info->pid = process->pid;
    info->parent = process->parent;
    info->core = process->core;
    info->state = process->state;
    info->priority = process->priority;
    info->exit_code = process->exit_code;
    info->ticks = process->ticks;
    info->cpu_cycles = process->cpu_cycles + running_span_cycles(process);
    info->memory_bytes = account_member_bytes(process); /* its mapping lends included */
    info->rights = process->rights;
    info->account = process->account;
    info->uid = process->uid;
    info->gid = process->gid;
    memcpy(info->name, process->name, NAME_BYTES);
    info->restarts = process->restarts;
    info->switches_in = process->switches_in;
    info->control_icas = process->controls_allocated;
    info->data_icas = process->icas_allocated - process->controls_allocated;
    info->block_icas = process->blocks_allocated;
    info->wait_reason = process->room_of_server != 0 ? PROCESS_WAIT_ICA_ROOM : process->wait_reason;
}
