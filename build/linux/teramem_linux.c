/* build/linux/teramem_linux.c: the Teramem library on Linux, so apps/sort and apps/memseq
 * build unchanged as static Linux programs (build/linux/build.sh) for the comparison of
 * Formica's pager with Linux swap (docs/pager.md, "Against Linux swap"). The pager region
 * becomes ordinary malloc'ed memory. The local limit (-l) becomes the memory.max of the
 * process's own cgroup v2 (build/linux/init starts it in a fresh one): what the cgroup
 * uses at teramem_init (stack, page tables, kernel objects: the process before its data) plus the
 * limit, so the data get the limit as on Formica. The swap counters are the kernel's own
 * (/proc/vmstat pswpin/pswpout, in 4 KiB pages) since teramem_init. The hints become madvise:
 * teramem_drop is MADV_PAGEOUT, teramem_prefetch MADV_WILLNEED. The same cgroup limit is
 * linux_cgroup_limit for flashbench's mmap and flmalloc methods (build/linux/flashbench_linux.c).
 */
#define _GNU_SOURCE
#include <formica/teramem.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21 /* Linux 5.4 */
#endif

#define LINUX_PAGE_BYTES 4096u

struct swap_counts {
    uint64_t pages_in, pages_out;
};

static struct {
    bool ready;
    struct teramem_options options;
    struct swap_counts at_init;
    uint64_t base_bytes;      /* the cgroup's memory.current at teramem_init (0: no limit set) */
    uint64_t lowest, highest; /* bounds of what teramalloc handed out */
} linux_teramem;

/* pswpin and pswpout of /proc/vmstat; false when the file cannot be read. */
static bool read_swap_counts(struct swap_counts *counts)
{
    FILE *vmstat = fopen("/proc/vmstat", "r");
    if (vmstat == NULL)
        return false;
    char name[64];
    unsigned long long value;
    *counts = (struct swap_counts){0};
    while (fscanf(vmstat, "%63s %llu", name, &value) == 2) {
        if (strcmp(name, "pswpin") == 0)
            counts->pages_in = value;
        else if (strcmp(name, "pswpout") == 0)
            counts->pages_out = value;
    }
    fclose(vmstat);
    return true;
}

/* The path of a file of the process's own cgroup v2 directory; false in the root cgroup
 * (or none), where no limit can be set. */
static bool cgroup_file_path(const char *file, char *path, size_t size)
{
    char group[256] = "";
    FILE *membership = fopen("/proc/self/cgroup", "r");
    if (membership == NULL)
        return false;
    bool found = fscanf(membership, "0::%255s", group) == 1;
    fclose(membership);
    if (!found || strcmp(group, "/") == 0)
        return false;
    snprintf(path, size, "/sys/fs/cgroup%s/%s", group, file);
    return true;
}

/* One line of a file of the process's cgroup ("" when absent). */
static void read_cgroup_file(const char *file, char *value, size_t size)
{
    char path[512];
    value[0] = '\0';
    FILE *stream = cgroup_file_path(file, path, sizeof path) ? fopen(path, "r") : NULL;
    if (stream == NULL)
        return;
    if (fgets(value, (int)size, stream) == NULL)
        value[0] = '\0';
    value[strcspn(value, "\n")] = '\0';
    fclose(stream);
}

/* What the cgroup uses: memory.stat's anon + file + kernel (memory.current would also count
 * the pages charged ahead to each CPU's stock, up to 64 per CPU). 0 when it cannot be read. */
static uint64_t cgroup_used_bytes(void)
{
    char path[512], name[64];
    unsigned long long value, used = 0;
    FILE *stat = cgroup_file_path("memory.stat", path, sizeof path) ? fopen(path, "r") : NULL;
    if (stat == NULL)
        return 0;
    while (fscanf(stat, "%63s %llu", name, &value) == 2)
        if (strcmp(name, "anon") == 0 || strcmp(name, "file") == 0 || strcmp(name, "kernel") == 0)
            used += value;
    fclose(stat);
    return used;
}

/* True when the process is alone in its cgroup (as build/linux/init starts it): only then is
 * the cgroup's limit the process's own, never a session's or a container's. */
static bool alone_in_cgroup(void)
{
    char path[512];
    FILE *procs = cgroup_file_path("cgroup.procs", path, sizeof path) ? fopen(path, "r") : NULL;
    if (procs == NULL)
        return false;
    long pid, count = 0;
    bool only_self = true;
    while (fscanf(procs, "%ld", &pid) == 1) {
        count++;
        only_self = only_self && pid == (long)getpid();
    }
    fclose(procs);
    return count == 1 && only_self;
}

/* memory.max = what the cgroup uses now + limit; false (and a message) when it cannot be set. */
static bool limit_cgroup(uint64_t limit_bytes)
{
    char path[512];
    if (!alone_in_cgroup())
        return false;
    linux_teramem.base_bytes = cgroup_used_bytes();
    if (linux_teramem.base_bytes == 0 || !cgroup_file_path("memory.max", path, sizeof path))
        return false;
    FILE *stream = fopen(path, "w");
    bool written =
        stream != NULL && fprintf(stream, "%lu\n", linux_teramem.base_bytes + limit_bytes) > 0;
    if (stream != NULL && fclose(stream) != 0)
        written = false;
    if (!written)
        printf("teramem: cannot write %s\n", path);
    return written;
}

bool linux_cgroup_limit(uint64_t limit_bytes)
{
    return limit_cgroup(limit_bytes);
}

long teramem_init(const struct teramem_options *options)
{
    if (!read_swap_counts(&linux_teramem.at_init)) {
        printf("teramem: cannot read /proc/vmstat\n");
        return -E_NOT_FOUND;
    }
    if (options->local_limit_bytes != 0 && !limit_cgroup(options->local_limit_bytes))
        printf("teramem: no cgroup of its own: the %lu-byte limit is not enforced\n",
               options->local_limit_bytes);
    linux_teramem.options = *options;
    linux_teramem.ready = true;
    return 0;
}

long teramem_stats(struct teramem_stats *stats)
{
    struct swap_counts now;
    *stats = (struct teramem_stats){0};
    if (!linux_teramem.ready || !read_swap_counts(&now))
        return -E_NOT_FOUND;
    stats->swap_in_blocks = now.pages_in - linux_teramem.at_init.pages_in;
    stats->swap_out_blocks = now.pages_out - linux_teramem.at_init.pages_out;
    stats->bytes_in = stats->swap_in_blocks * LINUX_PAGE_BYTES;
    stats->bytes_out = stats->swap_out_blocks * LINUX_PAGE_BYTES;
    long resident_pages = 0, size_pages = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm != NULL) {
        if (fscanf(statm, "%ld %ld", &size_pages, &resident_pages) != 2)
            resident_pages = 0;
        fclose(statm);
    }
    stats->resident_bytes = (uint64_t)resident_pages * LINUX_PAGE_BYTES;
    return 0;
}

/* Prints @json {"kind":"linux_swap",...}: Linux's counterpart of the pager's "pager" line. */
long teramem_cleanup(void)
{
    struct teramem_stats stats;
    if (teramem_stats(&stats) != 0)
        return -E_NOT_FOUND;
    char memory_max[32], memory_peak[32];
    read_cgroup_file("memory.max", memory_max, sizeof memory_max);
    read_cgroup_file("memory.peak", memory_peak, sizeof memory_peak);
    printf("@json {\"kind\":\"linux_swap\",\"pswpin\":%lu,\"pswpout\":%lu,\"bytes_in\":%lu,"
           "\"bytes_out\":%lu,\"base_bytes\":%lu,\"memory_max\":\"%s\",\"memory_peak\":\"%s\"}\n",
           stats.swap_in_blocks, stats.swap_out_blocks, stats.bytes_in, stats.bytes_out,
           linux_teramem.base_bytes, memory_max, memory_peak);
    linux_teramem.ready = false;
    return 0;
}

void *teramalloc(size_t bytes)
{
    void *memory = malloc(bytes);
    if (memory == NULL) {
        printf("teramalloc: %zu bytes do not fit (malloc failed)\n", bytes);
        return NULL;
    }
    uint64_t start = (uint64_t)memory, end = start + bytes;
    if (linux_teramem.lowest == 0 || start < linux_teramem.lowest)
        linux_teramem.lowest = start;
    if (end > linux_teramem.highest)
        linux_teramem.highest = end;
    return memory;
}

void terafree(void *pointer)
{
    free(pointer);
}

/* The whole pages of [address, address + bytes) given to madvise(advice). */
static long advise_pages(const void *address, size_t bytes, int advice)
{
    uint64_t start = ((uint64_t)address + LINUX_PAGE_BYTES - 1) & ~(uint64_t)(LINUX_PAGE_BYTES - 1);
    uint64_t end = ((uint64_t)address + bytes) & ~(uint64_t)(LINUX_PAGE_BYTES - 1);
    if (end <= start)
        return 0;
    if (madvise((void *)start, end - start, advice) != 0) {
        perror("teramem: madvise");
        return -E_INVALID;
    }
    return (long)((end - start) / LINUX_PAGE_BYTES);
}

long teramem_prefetch(const void *address, size_t bytes)
{
    return advise_pages(address, bytes, MADV_WILLNEED);
}

long teramem_drop(const void *address, size_t bytes)
{
    return advise_pages(address, bytes, MADV_PAGEOUT);
}

bool teramem_contains(const void *pointer)
{
    uint64_t address = (uint64_t)pointer;
    return address >= linux_teramem.lowest && address < linux_teramem.highest;
}

uint64_t teramem_base(void)
{
    return linux_teramem.ready ? linux_teramem.lowest : 0;
}

uint64_t teramem_capacity(void)
{
    return linux_teramem.highest - linux_teramem.lowest;
}
