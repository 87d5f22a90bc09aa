/* retired_blocks.h: which blocks FS freed after an FS replica's view of
 * the file system (docs/storage.md, "FS replicas"). FS's BLK_RETIRE names
 * freed blocks with the owner's operation-log sequence once they were
 * freed; a replica's BLK_READ with BLK_AS_OF names the sequence its view is
 * as of. A block retired after the view may now be another file's: the read
 * is refused (-E_STALE) and the replica looks again. Bounded: a
 * direct-mapped table keeps the newest sequence of the blocks of each
 * bucket, so a collision can only refuse a read that was right, never let
 * a stale one through. Plain C, host-tested. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define RETIRED_BUCKETS 4096u /* a power of two */

struct retired_blocks {
    uint64_t newest[RETIRED_BUCKETS]; /* per bucket: its blocks' newest retire (0: none) */
    uint64_t floor;                   /* every block counts as retired at least at this */
    bool unsealed;                    /* some entry is BLK_RETIRE_UNSEALED (UINT64_MAX) */
};

static inline uint32_t retired_bucket_of(uint64_t block)
{
    return (uint32_t)((block * 0x9e3779b97f4a7c15ull) >> 40) & (RETIRED_BUCKETS - 1);
}

/* Block `block` was retired at `sequence` (UINT64_MAX: not known yet). */
void retired_blocks_note(struct retired_blocks *retired, uint64_t block, uint64_t sequence);
/* Every block was retired at `sequence` (UINT64_MAX: not known yet). */
void retired_blocks_note_all(struct retired_blocks *retired, uint64_t sequence);
/* The retires not known yet become `sequence`'s. */
void retired_blocks_seal(struct retired_blocks *retired, uint64_t sequence);
/* True when no retire of `block` came after a view as of `as_of`: a read
 * with that view may be served. Inline: every replica read asks. */
static inline bool retired_blocks_unchanged_since(const struct retired_blocks *retired,
                                                  uint64_t block, uint64_t as_of)
{
    return retired->floor <= as_of && retired->newest[retired_bucket_of(block)] <= as_of;
}
