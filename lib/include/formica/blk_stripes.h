/* blk_stripes.h: which BLK shard owns a disk block, and how a run of
 * blocks splits where a stripe ends (docs/storage.md "Shards"). Every BLK
 * client and BLK itself route with these; none computes a shard itself.
 * Plain C, so BLK's cache and the host tests use them too. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Shard s of S owns disk block b when (b / BLK_STRIPE_BLOCKS) % S == s: a
 * stripe of 64 blocks (256 KiB), so read-ahead and write-back runs stay in
 * one shard. */
#define BLK_STRIPE_BLOCKS 64u

/* The shard of `shards` (>= 1) that owns disk block `block`. Inline: FS
 * asks once per forwarded readblock. */
static inline uint32_t blk_shard_of(uint64_t block, uint32_t shards)
{
    if (shards <= 1)
        return 0;
    return (uint32_t)((block / BLK_STRIPE_BLOCKS) % shards);
}

/* One part of a run of consecutive disk blocks: its blocks up to the end
 * of their stripe, and the shard that owns them. */
struct blk_run_part {
    uint64_t first;  /* its first disk block */
    uint32_t blocks; /* how many (>= 1) */
    uint32_t offset; /* blocks of the run before it */
    uint32_t shard;  /* the shard owning all of them */
};

/* The part of the run of `blocks` blocks from `first` that begins `done`
 * blocks in (done < blocks): a run is split where a stripe ends. The
 * routing of every BLK client:
 *     for (uint32_t done = 0; done < blocks; done += part.blocks)
 *         part = blk_run_part(first, blocks, done, shards), ... */
static inline struct blk_run_part blk_run_part(uint64_t first, uint32_t blocks, uint32_t done,
                                               uint32_t shards)
{
    uint64_t start = first + done;
    uint32_t left = blocks - done;
    uint64_t to_stripe_end = BLK_STRIPE_BLOCKS - start % BLK_STRIPE_BLOCKS;
    uint32_t count = shards <= 1 || to_stripe_end >= left ? left : (uint32_t)to_stripe_end;
    return (struct blk_run_part){start, count, done, blk_shard_of(start, shards)};
}

/* True when one shard owns every block of the list blocks[0..count)
 * (count >= 1); *shard is its index. */
bool blk_shard_of_list(const uint32_t *blocks, uint32_t count, uint32_t shards, uint32_t *shard);

/* The first disk block after `block` that `block`'s shard owns: the next
 * block, or at the end of a stripe the first of the shard's next stripe
 * (BLK's read-ahead follows a sequential reader across its own stripes). */
static inline uint64_t blk_shard_next_block(uint64_t block, uint32_t shards)
{
    uint64_t next = block + 1;
    if (shards <= 1 || next % BLK_STRIPE_BLOCKS != 0)
        return next;
    return next + (uint64_t)(shards - 1) * BLK_STRIPE_BLOCKS;
}
