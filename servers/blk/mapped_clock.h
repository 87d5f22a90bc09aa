/* mapped_clock.h: CLOCK's second chance over the lent blocks only mappings
 * see, shared by BLK's DRAM cache (cache_clock.c) and the NVM tier's sets
 * (tier_lines.c): the victim it gives has had its mappings revoked and is
 * lent to nobody (docs/mmap.md, "BLK's CLOCK revokes mapping lends"). */
#pragma once
#include "cache.h"

/* Ends the mappings of `block` (its handle's; memory.held_beyond_mappings
 * and memory.revoke set) when nothing else holds it; true when it is then
 * lent to nobody (a lend the check missed, read as the kernel's two counts
 * changed, keeps it: docs/mmap.md). */
bool mapped_clock_unmap(struct cache *cache, struct cache_block *block);

/* One hand over `count` blocks from `blocks` (the whole DRAM cache, or one
 * set's lines). `may_take` is what differs: DRAM takes any valid block (a
 * dirty one is written back after the revoke), the tier never a dirty line
 * (a pass cleans it first). */
struct mapped_clock {
    struct cache_block *blocks;
    uint32_t count;
    uint32_t *hand; /* the next block's index in `blocks`, kept between walks */
    bool (*may_take)(const struct cache_block *block);
    const char *first_take_note; /* logged the first time the cache takes one */
};

/* A block by CLOCK's rule (one faulted in since the hand last passed it,
 * referenced, is passed over once) that may be taken, is not busy and that
 * only mappings hold, its mappings ended. NULL when every block is held
 * otherwise (or nothing can revoke). */
struct cache_block *mapped_clock_victim(struct cache *cache, const struct mapped_clock *clock);
