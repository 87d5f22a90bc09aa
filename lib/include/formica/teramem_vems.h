/* teramem_vems.h: the vems backend of teramalloc (docs/design.md, "One
 * memory storage the size of the device"): a file as large as the region,
 * mapped MAP_SHARED through FS and BLK's NVM tier, so its pages are the
 * tier's lines and the disk behind them. The checks and counters are pure
 * (lib/teramem_vems_rules.c, host-tested); lib/teramem_vems.c does the rest. */
#pragma once
#include <formica/blk_tier.h>
#include <formica/teramem.h>
#include <stddef.h>
#include <stdint.h>

/* Whether a region of `bytes` may be a vems region over the tier `tier`
 * reports: 0, -E_NOT_FOUND when no tier is attached (none, detached, too
 * small, refused), -E_TOO_BIG when it is larger than the device behind the
 * tier, -E_INVALID for no bytes or a write-through tier (it refuses
 * writable mappings of its lines); `why` says which in words. */
long teramem_vems_check(const struct blk_tier_report *tier, uint64_t bytes, char *why,
                        size_t why_bytes);
/* The tier's counters between two reports as teramem's: a block read
 * from the disk into a line (a fill) is a swap-in, a block written back a
 * swap-out (the whole tier's, other users of the disk included); the
 * region's pages are lines or disk, never the process's DRAM, so
 * resident_bytes is 0. */
void teramem_vems_counters(const struct blk_tier_report *before,
                           const struct blk_tier_report *after, struct teramem_stats *stats);

/* lib/teramem_vems.c: the region made and mapped (base in *base), ended, its counters. */
long teramem_vems_open(uint64_t bytes, uint64_t *base);
long teramem_vems_close(void);
long teramem_vems_stats(struct teramem_stats *stats);
