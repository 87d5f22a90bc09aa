/* memory.c: flashbench's four memory methods (seed 000 §4.1): malloc-swap,
 * pager-backed memory that swaps to the disk beyond the local limit
 * (teramalloc); mmap, each array a file on the disk mapped shared; flmalloc,
 * local up to the limit then mapped files; dram, the heap. Every array comes
 * zeroed. */
#include "flashbench.h"
#include <formica/flmalloc.h>
#include <formica/teramem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAYS_MAX 16
#define TERAMALLOC_SLACK (64u << 10) /* the region's room per array beyond its bytes */

static const char *const method_names[METHOD_COUNT] = {
    [METHOD_MALLOC_SWAP] = "malloc-swap",
    [METHOD_MMAP] = "mmap",
    [METHOD_FLMALLOC] = "flmalloc",
    [METHOD_DRAM] = "dram",
};

static enum flash_method method;
static struct {
    void *base;
    uint64_t bytes;
} taken[ARRAYS_MAX];
static uint32_t taken_count;

const char *flash_method_name(enum flash_method which)
{
    return which < METHOD_COUNT ? method_names[which] : "unknown";
}

bool flash_method_parse(const char *name, enum flash_method *which)
{
    for (uint32_t i = 0; i < METHOD_COUNT; i++)
        if (strcmp(name, method_names[i]) == 0) {
            *which = (enum flash_method)i;
            return true;
        }
    return false;
}

static long start_swap(const struct flash_options *options, uint32_t arrays)
{
    struct teramem_options swap = {
        .local_limit_bytes = options->local_bytes,
        .backend = PAGER_BACKEND_DISK,
        .capacity_bytes = options->bytes + (uint64_t)arrays * TERAMALLOC_SLACK,
    };
    return teramem_init(&swap) < 0 ? -1 : 0;
}

long flash_memory_start(const struct flash_options *options, uint32_t arrays)
{
    method = options->method;
    taken_count = 0;
    if (arrays > ARRAYS_MAX) {
        printf("flashbench: %u arrays, at most %d\n", arrays, ARRAYS_MAX);
        return -1;
    }
    if (method == METHOD_MALLOC_SWAP)
        return start_swap(options, arrays);
    if (flash_local_bound(options) != 0)
        return -1;
    if (method == METHOD_FLMALLOC) {
        struct flmalloc_options local = {.local_limit_bytes = options->local_bytes,
                                         .directory = flash_far_directory()};
        return flmalloc_setup(&local);
    }
    return 0;
}

static void *take(uint64_t bytes)
{
    switch (method) {
    case METHOD_MALLOC_SWAP:
        return teramalloc(bytes); /* zero-filled on first touch */
    case METHOD_MMAP:
        return flash_mapped_file(bytes, taken_count);
    case METHOD_FLMALLOC:
        return flcalloc(1, bytes);
    default:
        return calloc(1, bytes);
    }
}

void *flash_memory_take(uint64_t bytes)
{
    if (taken_count == ARRAYS_MAX)
        return NULL;
    void *base = take(bytes);
    if (base == NULL) {
        printf("flashbench: no %s memory for %lu bytes\n", flash_method_name(method),
               (unsigned long)bytes);
        return NULL;
    }
    taken[taken_count].base = base;
    taken[taken_count++].bytes = bytes;
    return base;
}

long flash_memory_sync(void)
{
    if (method != METHOD_MMAP)
        return 0;
    for (uint32_t i = 0; i < taken_count; i++) {
        long error = flash_mapped_sync(taken[i].base, taken[i].bytes);
        if (error != 0)
            return error;
    }
    return 0;
}

static void give_back(uint32_t number)
{
    void *base = taken[number].base;
    switch (method) {
    case METHOD_MALLOC_SWAP:
        terafree(base);
        return;
    case METHOD_MMAP:
        flash_mapped_end(base, taken[number].bytes, number);
        return;
    case METHOD_FLMALLOC:
        flfree(base);
        return;
    default:
        free(base);
        return;
    }
}

void flash_memory_end(void)
{
    if (method == METHOD_FLMALLOC)
        flmalloc_stats_print();
    while (taken_count > 0) {
        taken_count--;
        give_back(taken_count);
    }
    if (method == METHOD_MALLOC_SWAP)
        teramem_cleanup();
}
