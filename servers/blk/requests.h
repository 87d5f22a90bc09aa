/* requests.h: BLK's answers to BLK_READ, BLK_WRITE, BLK_SYNC and BLK_STATS
 * (formica/storage.h) from the cache. */
#pragma once
#include "cache.h"
#include <stdbool.h>
#include <formica/ica.h>

/* Performs the request in the control ICA and sets its result; the caller
 * returns it. The handlers are declared in formica/protocol/blk_dispatch.h. */
void blk_answer(struct cache *cache, uint64_t control);
/* Bounds lent blocks: `per_client` per requester, half of `cache_capacity`
 * in all (cache_lends.h); 0 or -E_NO_MEMORY. */
int blk_lends_init(uint32_t cache_capacity, uint32_t per_client,
                   bool (*still_lent)(void *context, uint64_t handle));
