/* cache_clock.c: CLOCK (second chance): the hand passes over lent blocks and
 * clears a referenced block's bit once; an unreferenced one is the victim.
 * With every block lent, one only mappings see goes by the same rule, its
 * mappings revoked first (mapped_clock.c). A hit only sets a bit: no list
 * to move. */
#include "cache_internal.h"
#include "mapped_clock.h"
#include <formica/errors.h>

/* How far the hand looks for an unlent victim while every block was lent at
 * the last miss: asking whether a block is lent is a system call, and a
 * turn of the hand over a cache all lent into mappings would cost one per
 * block at every fault. A block let go since is found within a few misses. */
#define CLOCK_LOOK_WHILE_ALL_LENT 8u

/* An unlent victim, or NULL: after one turn of the hand that met no unlent
 * slot there can be none (a second turn only finds the bits it cleared).
 * `briefly`: only the next few blocks, the hand left where it was when none
 * is found there (as a whole turn leaves it). */
static struct cache_block *next_victim(struct cache *cache, bool briefly)
{
    bool met_unlent = false;
    uint32_t steps = 2 * cache->capacity + 1, hand = cache->hand;
    if (briefly && steps > CLOCK_LOOK_WHILE_ALL_LENT)
        steps = CLOCK_LOOK_WHILE_ALL_LENT;
    for (uint32_t step = 0; step < steps; step++) {
        if (step == cache->capacity && !met_unlent)
            return NULL;
        struct cache_block *block = &cache->blocks[cache->hand];
        cache->hand = (cache->hand + 1) % cache->capacity;
        if (block->busy)
            continue;
        if ((block->valid || block->retired) && cache_block_lent(cache, block))
            continue; /* lent out: someone reads it right now */
        met_unlent = true;
        if (!block->valid)
            return block;
        if (!block->referenced)
            return block;
        block->referenced = false;
    }
    cache->hand = hand;
    return NULL;
}

/* Any valid block: a dirty one is written back after its revoke (a retired
 * block's mappings ended at its retirement). */
static bool valid_block(const struct cache_block *block)
{
    return block->valid;
}

/* A victim among the lent blocks only mappings see (mapped_clock.h). */
static struct cache_block *next_mapped_victim(struct cache *cache)
{
    struct mapped_clock clock = {
        .blocks = cache->blocks,
        .count = cache->capacity,
        .hand = &cache->hand,
        .may_take = valid_block,
        .first_take_note = "blk: every block lent: evicting blocks only mappings see (their "
                           "mappings revoked; the next access faults them back)",
    };
    return mapped_clock_victim(cache, &clock);
}

int cache_take_slot(struct cache *cache, struct cache_block **slot)
{
    bool briefly = cache->every_block_lent;
    struct cache_block *victim = next_victim(cache, briefly);
    cache->every_block_lent = victim == NULL;
    if (victim == NULL)
        victim = next_mapped_victim(cache);
    if (victim == NULL && briefly)
        victim = next_victim(cache, false); /* nothing to revoke either: look all the way */
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
