/* cache_clock.c: CLOCK (second chance) replacement. The hand sweeps the
 * slots; a referenced block loses its bit and is passed over once, an
 * unreferenced one is the victim. A hit only sets a bit: no list to move. */
#include "cache_internal.h"
#include <formica/errors.h>

static struct cache_block *next_victim(struct cache *cache)
{
    for (uint32_t step = 0; step < 2 * cache->capacity + 1; step++) {
        struct cache_block *block = &cache->blocks[cache->hand];
        cache->hand = (cache->hand + 1) % cache->capacity;
        if (block->busy)
            continue;
        if ((block->valid || block->retired) && block->handle != 0 &&
            cache->memory.pinned != NULL &&
            cache->memory.pinned(cache->memory.context, block->handle))
            continue; /* lent out: someone reads it right now */
        if (!block->valid)
            return block;
        if (!block->referenced)
            return block;
        block->referenced = false;
    }
    return NULL;
}

int cache_take_slot(struct cache *cache, struct cache_block **slot)
{
    struct cache_block *victim = next_victim(cache);
    if (victim == NULL)
        return -E_BUSY;
    if (victim->valid && victim->dirty) {
        int error = cache_write_back_run(cache, victim);
        if (error != 0)
            return error;
    }
    if (victim->valid) {
        cache_hash_remove(cache, victim);
        cache->stats.evictions++;
        cache->stats.cached--;
    }
    victim->valid = false;
    victim->retired = false;
    victim->busy = true;
    *slot = victim;
    return 0;
}
