/* flmalloc.c: seed 000 §5.1's allocator: malloc for requests under 10 MiB
 * and while the local total stays under 80 % of the free memory; teramalloc
 * (pager-backed memory) beyond. Local blocks carry a 16-byte size header. */
#include <formica/teramem.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_BYTES 16u

static struct teramem_options far_options;
static uint64_t local_bytes;

void flmalloc_setup(const struct teramem_options *options)
{
    far_options = options != NULL ? *options : (struct teramem_options){0};
}

static uint64_t local_threshold(void)
{
    uint64_t free_memory = far_options.free_memory_bytes != 0 ? far_options.free_memory_bytes
                                                              : FLMALLOC_DEFAULT_FREE_MEMORY;
    return free_memory / 100 * FLMALLOC_LOCAL_PERCENT;
}

static void *local_allocate(size_t bytes)
{
    uint8_t *block = malloc(bytes + HEADER_BYTES);
    if (block == NULL)
        return NULL;
    memcpy(block, &bytes, sizeof(bytes));
    local_bytes += bytes;
    return block + HEADER_BYTES;
}

static void *far_allocate(size_t bytes)
{
    if (teramem_base() == 0 && teramem_init(&far_options) < 0)
        return NULL;
    return teramalloc(bytes);
}

void *flmalloc(size_t bytes)
{
    if (bytes < FLMALLOC_ALWAYS_LOCAL || local_bytes + bytes <= local_threshold())
        return local_allocate(bytes);
    return far_allocate(bytes);
}

void *flcalloc(size_t count, size_t size)
{
    if (size != 0 && count > (size_t)-1 / size)
        return NULL;
    void *pointer = flmalloc(count * size);
    if (pointer != NULL)
        memset(pointer, 0, count * size);
    return pointer;
}

void flfree(void *pointer)
{
    if (pointer == NULL)
        return;
    if (teramem_contains(pointer)) {
        terafree(pointer);
        return;
    }
    uint8_t *block = (uint8_t *)pointer - HEADER_BYTES;
    size_t bytes;
    memcpy(&bytes, block, sizeof(bytes));
    local_bytes -= bytes;
    free(block);
}

uint64_t flmalloc_local_bytes(void)
{
    return local_bytes;
}
