/* flmalloc.c: libflmalloc (seed 000 §5.1): the policy of flmalloc_policy.c
 * over two kinds of block: local ones from the heap (heap.h, so a program
 * linked with --wrap=malloc still reaches it) behind a 16-byte header of size
 * and check, and far ones, files mapped by flmalloc_far.c, found by address
 * in a table of FLMALLOC_FAR_MAX. One thread per process: no locks. */
#include "flmalloc_far.h"
#include "flmalloc_policy.h"
#include "heap.h"
#include <formica/flmalloc.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct local_header {
    uint64_t bytes;
    uint64_t check;
};
_Static_assert(sizeof(struct local_header) == FLMALLOC_HEADER_BYTES, "the header keeps alignment");

static bool set_up;
static struct flmalloc_budget budget;
static const char *far_directory = FLMALLOC_DIRECTORY;
static struct flmalloc_far far_files[FLMALLOC_FAR_MAX];
static struct flmalloc_stats counts;

long flmalloc_setup(const struct flmalloc_options *options)
{
    struct flmalloc_options chosen = options != NULL ? *options : (struct flmalloc_options){0};
    long error = 0;
    uint64_t limit = chosen.local_limit_bytes;
    if (limit == 0) {
        struct memory_report report = {0};
        error = memory_report_get(&report);
        if (error != 0)
            printf("flmalloc: no memory report (%s): local limit 0\n", error_text(error));
        limit = flmalloc_limit_of(report.available, FLMALLOC_LOCAL_PERCENT);
    }
    struct flmalloc_budget held = budget; /* blocks taken before a second setup stay counted */
    flmalloc_budget_init(&budget, limit);
    budget.local = held.local;
    budget.local_peak = held.local_peak;
    far_directory = chosen.directory != NULL ? chosen.directory : FLMALLOC_DIRECTORY;
    for (uint32_t i = 0; i < FLMALLOC_FAR_MAX; i++)
        if (far_files[i].base == NULL)
            far_files[i].fd = -1;
    set_up = true;
    return error;
}

static void set_up_once(void)
{
    if (!set_up)
        flmalloc_setup(NULL);
}

static void *failed(const char *why, uint64_t bytes)
{
    counts.failures++;
    printf("flmalloc: %lu bytes refused: %s\n", (unsigned long)bytes, why);
    return NULL;
}

static void *local_allocate(uint64_t bytes)
{
    struct local_header *header = heap_malloc(FLMALLOC_HEADER_BYTES + bytes);
    if (header == NULL)
        return failed("the heap cannot grow", bytes);
    *header = (struct local_header){bytes, flmalloc_header_check(bytes)};
    flmalloc_took_local(&budget, bytes);
    counts.local_allocations++;
    return header + 1;
}

static struct flmalloc_far *free_far_slot(void)
{
    for (uint32_t i = 0; i < FLMALLOC_FAR_MAX; i++)
        if (far_files[i].base == NULL)
            return &far_files[i];
    return NULL;
}

static void *far_allocate(uint64_t bytes)
{
    struct flmalloc_far *slot = free_far_slot();
    if (slot == NULL)
        return failed("FLMALLOC_FAR_MAX far files are mapped already", bytes);
    if (flmalloc_far_map(far_directory, flmalloc_far_length(bytes), slot) != 0)
        return failed("no far file", bytes);
    slot->bytes = bytes;
    counts.far_allocations++;
    counts.far_files++;
    counts.far_bytes += slot->length;
    if (counts.far_files > counts.far_files_peak)
        counts.far_files_peak = counts.far_files;
    return slot->base;
}

/* A block where the policy says; *far tells which kind it is. */
static void *allocate(uint64_t bytes, bool *far)
{
    set_up_once();
    switch (flmalloc_choose(&budget, bytes)) {
    case FLMALLOC_LOCAL:
        *far = false;
        return local_allocate(bytes);
    case FLMALLOC_FAR:
        *far = true;
        return far_allocate(bytes);
    default:
        return failed("too large", bytes);
    }
}

void *flmalloc(size_t bytes)
{
    bool far;
    return allocate(bytes, &far);
}

void *flcalloc(size_t count, size_t size)
{
    uint64_t bytes;
    if (!flmalloc_array_bytes(count, size, &bytes))
        return failed("count times size overflows", UINT64_MAX);
    bool far;
    void *pointer = allocate(bytes, &far);
    if (pointer != NULL && !far)
        memset(pointer, 0, bytes); /* a far file reads as zeroes already */
    return pointer;
}

static struct flmalloc_far *far_of(const void *pointer)
{
    for (uint32_t i = 0; i < FLMALLOC_FAR_MAX; i++)
        if (far_files[i].base != NULL && far_files[i].base == pointer)
            return &far_files[i];
    return NULL;
}

/* The header of a local block, or NULL (and a message) for a pointer
 * flmalloc did not hand out. */
static struct local_header *header_of(void *pointer, const char *caller)
{
    struct local_header *header = (struct local_header *)pointer - 1;
    if (((uintptr_t)pointer & (FLMALLOC_HEADER_BYTES - 1)) != 0 ||
        header->check != flmalloc_header_check(header->bytes)) {
        counts.failures++;
        printf("flmalloc: %s(%p): not a block flmalloc handed out; left alone\n", caller, pointer);
        return NULL;
    }
    return header;
}

static void far_free(struct flmalloc_far *far)
{
    counts.far_files--;
    counts.far_bytes -= far->length;
    flmalloc_far_unmap(far);
}

static void local_free(struct local_header *header)
{
    flmalloc_gave_local(&budget, header->bytes);
    header->check = 0; /* a second flfree of it is refused */
    heap_free(header);
}

void flfree(void *pointer)
{
    if (pointer == NULL)
        return;
    struct flmalloc_far *far = far_of(pointer);
    if (far != NULL) {
        far_free(far);
        return;
    }
    struct local_header *header = header_of(pointer, "flfree");
    if (header != NULL)
        local_free(header);
}

/* The bytes a block may hold where it is, or false for a foreign pointer. */
static bool capacity_of(void *pointer, uint64_t *capacity)
{
    struct flmalloc_far *far = far_of(pointer);
    if (far != NULL) {
        *capacity = far->length;
        return true;
    }
    struct local_header *header = header_of(pointer, "flrealloc");
    if (header == NULL)
        return false;
    *capacity = header->bytes;
    return true;
}

void *flrealloc(void *pointer, size_t bytes)
{
    if (pointer == NULL)
        return flmalloc(bytes);
    if (bytes == 0) {
        flfree(pointer);
        return NULL;
    }
    uint64_t capacity;
    if (!capacity_of(pointer, &capacity))
        return NULL;
    if (bytes <= capacity)
        return pointer; /* shrinking keeps the block, as lib/malloc.c's realloc does */
    void *moved = flmalloc(bytes);
    if (moved != NULL) {
        memcpy(moved, pointer, capacity);
        flfree(pointer);
    }
    return moved;
}

void flmalloc_stats_get(struct flmalloc_stats *stats)
{
    set_up_once();
    *stats = counts;
    stats->local_limit = budget.limit;
    stats->local_bytes = budget.local;
    stats->local_peak = budget.local_peak;
}

void flmalloc_stats_print(void)
{
    struct flmalloc_stats stats;
    flmalloc_stats_get(&stats);
    printf("@json {\"kind\":\"flmalloc\",\"local_limit\":%lu,\"local_bytes\":%lu,"
           "\"local_peak\":%lu,\"far_bytes\":%lu,\"far_files\":%u,\"far_files_peak\":%u,"
           "\"local_allocations\":%lu,\"far_allocations\":%lu,\"failures\":%lu}\n",
           (unsigned long)stats.local_limit, (unsigned long)stats.local_bytes,
           (unsigned long)stats.local_peak, (unsigned long)stats.far_bytes, stats.far_files,
           stats.far_files_peak, (unsigned long)stats.local_allocations,
           (unsigned long)stats.far_allocations, (unsigned long)stats.failures);
}
