/* requests.h: BLK's answers to BLK_READ, BLK_WRITE, BLK_SYNC and BLK_STATS
 * (formica/storage.h) from the cache. */
#pragma once
#include "cache.h"
#include <formica/ica.h>

/* Performs the request in the control ICA and sets its result; the caller
 * returns it. The handlers are declared in formica/protocol/blk_dispatch.h. */
void blk_answer(struct cache *cache, uint64_t control);
