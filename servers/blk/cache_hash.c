/* cache_hash.c: the cache's hash table: buckets of singly linked blocks,
 * a power-of-two count at least the capacity, so chains stay short. */
#include "cache_internal.h"

static uint32_t bucket_of(const struct cache *cache, uint64_t number)
{
    return (uint32_t)((number * 0x9e3779b97f4a7c15ull) >> 32) & cache->bucket_mask;
}

struct cache_block *cache_lookup(struct cache *cache, uint64_t number)
{
    struct cache_block *block = cache->buckets[bucket_of(cache, number)];
    while (block != NULL && block->number != number)
        block = block->hash_next;
    return block;
}

void cache_hash_insert(struct cache *cache, struct cache_block *block)
{
    struct cache_block **head = &cache->buckets[bucket_of(cache, block->number)];
    block->hash_next = *head;
    *head = block;
}

void cache_hash_remove(struct cache *cache, struct cache_block *block)
{
    struct cache_block **link = &cache->buckets[bucket_of(cache, block->number)];
    while (*link != NULL && *link != block)
        link = &(*link)->hash_next;
    if (*link == block)
        *link = block->hash_next;
    block->hash_next = NULL;
}
