/* cache_internal.h: what the cache's files share: the hash table's
 * changes, CLOCK's choice of a slot, writing dirty blocks back, and
 * whether a block is lent. */
#pragma once
#include "cache.h"

void cache_hash_insert(struct cache *cache, struct cache_block *block);
void cache_hash_remove(struct cache *cache, struct cache_block *block);
/* A slot for a new block, marked busy and out of the hash table: a free one
 * or CLOCK's victim, written back first if dirty. 0 or an error. */
int cache_take_slot(struct cache *cache, struct cache_block **slot);
/* Writes the dirty run of consecutive blocks that starts at `block`. */
int cache_write_back_run(struct cache *cache, struct cache_block *block);
/* Whether `block` (a tier's line: the line or its lend copy) is lent to
 * someone now: a system call in BLK (memory.pinned). */
bool cache_block_lent(const struct cache *cache, const struct cache_block *block);
