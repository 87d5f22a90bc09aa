/* cache_internal.h: what the cache's files share: the hash table, CLOCK's
 * choice of a slot, and writing dirty blocks back. */
#pragma once
#include "cache.h"

static inline uint32_t cache_bucket_of(const struct cache *cache, uint64_t number)
{
    return (uint32_t)((number * 0x9e3779b97f4a7c15ull) >> 32) & cache->bucket_mask;
}
/* The cached block `number`, or NULL (inline: every request looks one up). */
static inline struct cache_block *cache_lookup(struct cache *cache, uint64_t number)
{
    struct cache_block *block = cache->buckets[cache_bucket_of(cache, number)];
    while (block != NULL && block->number != number)
        block = block->hash_next;
    return block;
}
void cache_hash_insert(struct cache *cache, struct cache_block *block);
void cache_hash_remove(struct cache *cache, struct cache_block *block);
/* A slot for a new block, marked busy and out of the hash table: a free one
 * or CLOCK's victim, written back first if dirty. 0 or an error. */
int cache_take_slot(struct cache *cache, struct cache_block **slot);
/* Writes the dirty run of consecutive blocks that starts at `block`. */
int cache_write_back_run(struct cache *cache, struct cache_block *block);
