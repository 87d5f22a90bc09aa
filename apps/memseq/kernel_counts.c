/* kernel_counts.c: sums the per-core counters and finds the pager's switch-in count, so
 * memseq's sequential line says how many address-space switches, interrupts and system calls
 * its swap-ins took (docs/pager.md, Session 23). */
#include "kernel_counts.h"
#include <formica/protocol/pager.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

static struct core_info cores[FORMICA_MAX_CORES];
static struct process_info processes[PROCESS_LIST_MAX]; /* the whole table: the pager anywhere */

static void read_processes(struct kernel_counts *counts)
{
    long count = process_list(processes, PROCESS_LIST_MAX);
    for (long i = 0; i < count; i++) {
        if (strcmp(processes[i].name, SERVER_NAME_PAGER) == 0) {
            counts->pager_runs = processes[i].switches_in;
            counts->pager_cycles = processes[i].cpu_cycles;
        }
        if (processes[i].pid == (uint32_t)process_id())
            counts->own_cycles = processes[i].cpu_cycles;
    }
}

void kernel_counts_read(struct kernel_counts *counts)
{
    memset(counts, 0, sizeof(*counts));
    long count = core_list(cores, FORMICA_MAX_CORES);
    for (long i = 0; i < count; i++) {
        counts->cr3_writes += cores[i].cr3_writes;
        counts->device_interrupts += cores[i].device_interrupts;
        counts->system_calls += cores[i].system_calls;
        if (cores[i].id == (uint32_t)core_id())
            counts->idle_cycles = cores[i].idle_cycles;
    }
    read_processes(counts);
}

void kernel_counts_print(const struct kernel_counts *before, const struct kernel_counts *after)
{
    printf(",\"cr3_writes\":%lu,\"device_interrupts\":%lu,\"system_calls\":%lu,\"pager_runs\":%lu,"
           "\"idle_cycles\":%lu,"
           "\"pager_cycles\":%lu,\"own_cycles\":%lu",
           after->cr3_writes - before->cr3_writes,
           after->device_interrupts - before->device_interrupts,
           after->system_calls - before->system_calls, after->pager_runs - before->pager_runs,
           after->idle_cycles - before->idle_cycles, after->pager_cycles - before->pager_cycles,
           after->own_cycles - before->own_cycles);
}
