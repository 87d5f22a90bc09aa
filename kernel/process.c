/* process.c: looking up processes in the shared table. */
#include "process.h"
#include "shared.h"
#include <string.h>

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
    info->cpu_cycles = process->cpu_cycles;
    info->memory_bytes = process->memory_bytes;
    info->rights = process->rights;
    info->account = process->account;
    info->uid = process->uid;
    info->gid = process->gid;
    memcpy(info->name, process->name, NAME_BYTES);
    info->restarts = process->restarts;
    info->switches_in = process->switches_in;
}
