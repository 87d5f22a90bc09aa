/* build/linux/flashbench_linux.c: apps/flashbench's system part on Linux (in place of
 * apps/flashbench/system.c; build/linux/build.sh): mapped files and flmalloc's far files on the
 * ext2 disk at /mnt (build/linux/init mounts it), and the local bound of the mmap and flmalloc
 * methods the process's cgroup memory.max, which also bounds the page cache the mapped files
 * use (malloc-swap's is teramem_init's; dram has none). */
#include "flashbench.h"
#include <formica/user.h>
#include <stdio.h>
#include <time.h>

const char flash_system[] = "linux";
const char flash_file_directory[] = "/mnt";

const char *flash_far_directory(void)
{
    return "/mnt/flm";
}

long flash_local_bound(const struct flash_options *options)
{
    if (options->method != METHOD_MMAP && options->method != METHOD_FLMALLOC)
        return 0;
    if (!linux_cgroup_limit(options->local_bytes)) {
        printf("flashbench: no cgroup of its own: the %lu-byte bound cannot be set\n",
               (unsigned long)options->local_bytes);
        return -1;
    }
    return 0;
}

uint64_t clock_microseconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}
