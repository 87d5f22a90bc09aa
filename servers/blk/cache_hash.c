/* cache_hash.c: the cache's hash table: buckets of singly linked blocks,
 * a power-of-two count at least the capacity, so chains stay short. */
#include "cache_internal.h"

void cache_hash_insert(struct cache *cache, struct cache_block *block)
{
    struct cache_block **head = &cache->buckets[cache_bucket_of(cache, block->number)];
    block->hash_next = *head;
    *head = block;
}

void cache_hash_remove(struct cache *cache, struct cache_block *block)
{
    struct cache_block **link = &cache->buckets[cache_bucket_of(cache, block->number)];
    while (*link != NULL && *link != block)
        link = &(*link)->hash_next;
    if (*link == block)
        *link = block->hash_next;
    block->hash_next = NULL;
}
