/* tier_attach.h: BLK's NVM tier at start-up and at `tier detach`
 * (tier_attach.c). */
#pragma once
#include "cache.h"
#include "tier.h"

/* The tier when boot named one (attached, refused, too small or detached), else NULL. */
struct tier *blk_tier(void);
/* Makes `cache` the tier when the boot option nvm=... names one: 1 (the
 * tier is the cache: attached, or refused), 0 (BLK caches in DRAM: no
 * tier, an NVDIMM too small, several shards), or an error. `memory` gives
 * the DRAM block ICAs of lends. */
int blk_tier_attach(struct cache *cache, const struct cache_disk *disk, uint32_t shards,
                    const struct cache_memory *memory);
/* `tier detach`: a pass, the header `detached`, then `dram_cache` makes
 * `cache` a DRAM cache again. 0, -E_NOT_FOUND (no tier attached), or the
 * pass's error (nothing changed). */
int blk_tier_detach(struct cache *cache, int (*dram_cache)(struct cache *cache));
/* With nvm_record=N: where the tags and lines are (@json nvm_layout, who
 * "tier"), then the order of every NVM write, flush and fence since the
 * mount or the last dump (tests/integration/nvm_order.py checks it). */
void blk_tier_dump_order(void);
