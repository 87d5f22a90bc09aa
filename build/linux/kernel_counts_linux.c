/* build/linux/kernel_counts_linux.c: memseq's kernel counters (apps/memseq/kernel_counts.h)
 * on Linux: context switches and interrupts of the whole guest (/proc/stat ctxt, intr) and
 * the pages swapped in and out (/proc/vmstat pswpin, pswpout) over memseq's sequential read. */
#include "kernel_counts.h"
#include <stdio.h>
#include <string.h>

/* The first number after `name` on a line of `path` that starts with it (0 if none). */
static uint64_t counter(const char *path, const char *name)
{
    FILE *stream = fopen(path, "r");
    if (stream == NULL)
        return 0;
    char line[4096];
    unsigned long long value = 0;
    size_t length = strlen(name);
    while (fgets(line, sizeof line, stream) != NULL)
        if (strncmp(line, name, length) == 0 && line[length] == ' ' &&
            sscanf(line + length, "%llu", &value) == 1)
            break;
    fclose(stream);
    return value;
}

/* On Linux: cr3_writes holds context switches, pager_runs pages swapped in, own_cycles pages
 * swapped out; kernel_counts_print names them as what they are. */
void kernel_counts_read(struct kernel_counts *counts)
{
    *counts = (struct kernel_counts){
        .cr3_writes = counter("/proc/stat", "ctxt"),
        .device_interrupts = counter("/proc/stat", "intr"),
        .pager_runs = counter("/proc/vmstat", "pswpin"),
        .own_cycles = counter("/proc/vmstat", "pswpout"),
    };
}

void kernel_counts_print(const struct kernel_counts *before, const struct kernel_counts *after)
{
    printf(",\"context_switches\":%lu,\"device_interrupts\":%lu,\"pswpin\":%lu,\"pswpout\":%lu",
           after->cr3_writes - before->cr3_writes,
           after->device_interrupts - before->device_interrupts,
           after->pager_runs - before->pager_runs, after->own_cycles - before->own_cycles);
}
