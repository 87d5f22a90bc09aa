/* mapped_clock.c: the walk of mapped_clock.h: the hand sweeps the lent
 * blocks by the second-chance rule and takes the first whose only lends are
 * mappings, after revoking them and checking nothing holds it since. */
#include "cache_internal.h"
#include "mapped_clock.h"
#include <stdio.h>

bool mapped_clock_unmap(struct cache *cache, struct cache_block *block)
{
    void *context = cache->memory.context;
    if (cache->memory.held_beyond_mappings(context, block->handle))
        return false; /* a request's lend, an answer on its way, FS's borrowing */
    cache->memory.revoke(context, block->handle, false);
    return !cache_block_lent(cache, block);
}

struct cache_block *mapped_clock_victim(struct cache *cache, const struct mapped_clock *clock)
{
    if (cache->memory.held_beyond_mappings == NULL || cache->memory.revoke == NULL)
        return NULL;
    for (uint32_t step = 0; step < 2 * clock->count + 1; step++) {
        struct cache_block *block = &clock->blocks[*clock->hand];
        *clock->hand = (*clock->hand + 1) % clock->count;
        if (block->busy || block->handle == 0 || !clock->may_take(block))
            continue;
        if (block->referenced) {
            block->referenced = false;
            continue;
        }
        if (!mapped_clock_unmap(cache, block))
            continue;
        if (!cache->evicted_mapped)
            printf("%s\n", clock->first_take_note);
        cache->evicted_mapped = true;
        return block;
    }
    return NULL;
}
