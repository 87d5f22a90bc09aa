/* cache_writeback.c: writing dirty blocks back to the disk, on eviction and
 * on sync. A dirty block goes out together with the dirty blocks that follow
 * it on the disk (up to CACHE_MAX_RUN), so a sync makes few large writes. */
#include "cache_internal.h"
#include "tier.h"

static uint32_t gather_run(struct cache *cache, struct cache_block *first, struct cache_block **run)
{
    uint32_t count = 0;
    struct cache_block *block = first;
    while (count < CACHE_MAX_RUN && block != NULL && block->valid && block->dirty) {
        run[count++] = block;
        block = cache_lookup(cache, first->number + count);
    }
    return count;
}

int cache_write_back_run(struct cache *cache, struct cache_block *block)
{
    if (cache->tier != NULL)
        return tier_pass(cache); /* a tier's lines go back only in passes (their tags) */
    struct cache_block *run[CACHE_MAX_RUN];
    const uint8_t *buffers[CACHE_MAX_RUN] = {0}; /* (GCC cannot see gather_run fills them) */
    uint32_t count = gather_run(cache, block, run);
    for (uint32_t i = 0; i < count; i++) {
        buffers[i] = run[i]->data;
        if (run[i]->stored_into && cache->memory.revoke != NULL) {
            /* the next store faults and marks it dirty again: no dirty bits to scan */
            cache->memory.revoke(cache->memory.context, run[i]->handle, true);
            run[i]->stored_into = false;
        }
    }
    int error = cache->disk.write(cache->disk.context, block->number, count, buffers);
    if (error != 0)
        return error;
    for (uint32_t i = 0; i < count; i++)
        run[i]->dirty = false;
    cache->stats.written_back += count;
    cache->stats.dirty -= count;
    return 0;
}

/* A dirty block whose predecessor is not dirty in the cache starts a run. */
static bool starts_run(struct cache *cache, const struct cache_block *block)
{
    if (block->number == 0)
        return true;
    struct cache_block *previous = cache_lookup(cache, block->number - 1);
    return previous == NULL || !previous->dirty;
}

int cache_sync(struct cache *cache)
{
    if (cache->tier != NULL)
        return tier_pass(cache);
    int first_error = 0;
    for (int pass = 0; pass < 2 && cache->stats.dirty > 0; pass++) {
        for (uint32_t i = 0; i < cache->capacity; i++) {
            struct cache_block *block = &cache->blocks[i];
            if (!block->valid || !block->dirty || (pass == 0 && !starts_run(cache, block)))
                continue;
            int error = cache_write_back_run(cache, block);
            if (error != 0 && first_error == 0)
                first_error = error;
        }
    }
    if (first_error == 0 && cache->disk.flush != NULL)
        first_error = cache->disk.flush(cache->disk.context);
    return first_error;
}

int cache_write_through(struct cache *cache, uint64_t number)
{
    struct cache_block *block = cache_lookup(cache, number);
    if (block == NULL || !block->valid || !block->dirty)
        return 0; /* written already, with an earlier block's run */
    return cache_write_back_run(cache, block);
}
