/* build/linux/flmalloc_linux.c: what lib/flmalloc.c and lib/flmalloc_far.c call beyond libc,
 * on Linux, so libflmalloc builds unchanged into the static Linux flashbench
 * (build/linux/build.sh): the local heap is libc's malloc, the memory report sysinfo's (with
 * MemAvailable from /proc/meminfo), mkdir with Formica's signature, mmap_error and process_id. */
#define _GNU_SOURCE
#include "../../lib/heap.h"
#include <errno.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysinfo.h>

void *heap_malloc(size_t size)
{
    return malloc(size);
}

void heap_free(void *pointer)
{
    free(pointer);
}

long(linux_file_mkdir)(const char *path)
{
    if ((mkdir)(path, 0755) == 0)
        return 0;
    return errno == EEXIST ? -E_EXISTS : -1;
}

long mmap_error(void)
{
    return -1;
}

long process_id(void)
{
    return (long)getpid();
}

/* MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read. */
static uint64_t available_bytes(void)
{
    FILE *meminfo = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kib = 0;
    while (meminfo != NULL && fgets(line, sizeof line, meminfo) != NULL)
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    if (meminfo != NULL)
        fclose(meminfo);
    return (uint64_t)kib * 1024;
}

long memory_report_get(struct memory_report *report)
{
    struct sysinfo info;
    if (sysinfo(&info) != 0)
        return -1;
    report->total = (uint64_t)info.totalram * info.mem_unit;
    report->free = (uint64_t)info.freeram * info.mem_unit;
    report->available = available_bytes();
    return 0;
}
