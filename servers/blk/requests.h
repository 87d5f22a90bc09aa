/* requests.h: BLK's answers to BLK_READ, BLK_WRITE, BLK_SYNC and BLK_STATS
 * (formica/storage.h) from the cache. */
#pragma once
#include "cache.h"
#include "kept_journal.h"
#include <formica/ica.h>
#include <stdbool.h>

/* Serves BLK's requests from `cache` for ever, one at a time: each answered
 * (the handlers are declared in formica/protocol/blk_dispatch.h), returned,
 * and the next received in one system call. A failed return is reported
 * and followed by a plain receive; a failed receive ends BLK. */
_Noreturn void blk_serve(struct cache *cache);
/* Bounds lent blocks: `per_client` per requester, half of `cache_capacity`
 * in all (cache_lends.h); 0 or -E_NO_MEMORY. */
int blk_lends_init(uint32_t cache_capacity, uint32_t per_client,
                   bool (*still_lent)(void *context, uint64_t handle));
/* What a BLK_WRITE has done before it is answered (docs/recovery.md). */
enum blk_durability {
    BLK_KEPT,          /* default: copied into the kept journal; survives BLK's restart */
    BLK_WRITE_THROUGH, /* written to the disk (DK) */
    BLK_WRITE_BACK,    /* only dirty in the cache until a sync or eviction: lost if BLK ends */
};
/* Sets the mode; `journal` is the kept journal for BLK_KEPT (new, or
 * replayed: journal_start). */
void blk_set_durability(enum blk_durability mode, struct journal *journal);
/* How `tier detach` makes the cache a DRAM one again (main.c's). */
void blk_set_dram_cache(int (*make)(struct cache *cache));
