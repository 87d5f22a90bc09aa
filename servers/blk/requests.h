/* requests.h: BLK's answers to BLK_READ, BLK_WRITE, BLK_SYNC and BLK_STATS
 * (formica/storage.h) from the cache. */
#pragma once
#include "cache.h"
#include <formica/ica.h>

/* Performs the request in `page` and sets its result; the caller returns it. */
void blk_answer(struct cache *cache, struct ica_control *page);
