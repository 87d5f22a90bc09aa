/* cache_internal.h: what the cache's files share: the hash table's
 * changes, CLOCK's choice of a slot, and writing dirty blocks back. */
#pragma once
#include "cache.h"

void cache_hash_insert(struct cache *cache, struct cache_block *block);
void cache_hash_remove(struct cache *cache, struct cache_block *block);
/* A slot for a new block, marked busy and out of the hash table: a free one
 * or CLOCK's victim, written back first if dirty. 0 or an error. */
int cache_take_slot(struct cache *cache, struct cache_block **slot);
/* Writes the dirty run of consecutive blocks that starts at `block`. */
int cache_write_back_run(struct cache *cache, struct cache_block *block);
