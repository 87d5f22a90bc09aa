/* cache.h: BLK's file cache: disk blocks in a hash table, replaced by CLOCK
 * (second chance; a block only mappings see, once they are revoked), written
 * back when evicted or synced, read ahead on sequential misses. Plain C over
 * a caller's callbacks, so the host tests can run it. */
#pragma once
#include <formica/blk_stripes.h>
#include <formica/errors.h>
#include <formica/small_copy.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CACHE_BLOCK_BYTES 4096u
#define CACHE_READ_AHEAD 8u /* blocks read after a miss that follows a miss on block - 1 */
#define CACHE_MAX_RUN 16u   /* most blocks in one disk transfer */
#define CACHE_FILL_MAX 33u  /* most blocks one miss reads (the tier's read-ahead + 1) */

/* The disk below the cache: `count` consecutive blocks from `first`, block i
 * in buffers[i]. Both return 0 or a negative E_* code. */
struct cache_disk {
    void *context;
    uint64_t blocks; /* the disk's size in blocks */
    int (*read)(void *context, uint64_t first, uint32_t count, uint8_t *const *buffers);
    int (*write)(void *context, uint64_t first, uint32_t count, const uint8_t *const *buffers);
    /* Optional: empties the disk's write cache (after a sync's writes). */
    int (*flush)(void *context);
};

/* Where block memory comes from: by default the heap; BLK gives each block
 * its own block ICA so it can lend it. `pinned` says a block may not be
 * reused now (it is lent out). Either callback may be NULL. */
struct cache_memory {
    void *context;
    int (*allocate)(void *context, uint8_t **data, uint64_t *handle);
    bool (*pinned)(void *context, uint64_t handle);
    /* Makes every mapping of `handle` read-only before its block is
     * written back, or ends them before a freed block is retired
     * (SYS_ICA_REVOKE, waited for); NULL: nothing is mapped. */
    void (*revoke)(void *context, uint64_t handle, bool write_only);
    /* True while a lend other than a mapping lend holds `handle` (a request's
     * lend, FS's borrowing); a block only mappings see is one CLOCK may take
     * when no unlent block is left: it revokes them (revoke, not write_only)
     * and evicts it (cache_clock.c). NULL: lent blocks are never taken. */
    bool (*held_beyond_mappings)(void *context, uint64_t handle);
    /* The tier: a block ICA whose frame is the line at `data` itself
     * (SYS_ICA_DEVICE_BLOCK), and its end; NULL: lines are lent as copies. */
    int (*bind)(void *context, uint8_t *data, uint64_t *handle);
    void (*unbind)(void *context, uint64_t handle);
};

struct cache_block {
    uint64_t number;
    uint8_t *data;
    uint64_t handle; /* the block ICA holding data, 0 when on the heap */
    struct cache_block *hash_next;
    bool valid;       /* holds the disk block `number` */
    bool dirty;       /* changed since it was read or written back */
    bool referenced;  /* CLOCK's second-chance bit, set on every use */
    bool busy;        /* being filled: not a victim */
    bool retired;     /* out of the hash, its old bytes kept for its borrowers (cache_retire) */
    bool on_disk;     /* tier, write-through: dirty, but its bytes are on the disk already */
    bool stored_into; /* lent writable into a mapping since it was last written back */
    uint16_t copy;    /* tier: the pool block (index + 1) kept equal to the line for lends, or 0 */
    bool bound;       /* tier: `handle` is a block ICA over the line itself (tier_lend_handle) */
};

struct tier;

struct cache_stats {
    uint64_t hits, misses, read_ahead, written_back, evictions, retired;
    uint32_t dirty, cached, capacity;
};

struct cache {
    struct cache_disk disk;
    struct cache_memory memory;
    struct cache_block *blocks;
    uint32_t capacity;
    struct cache_block **buckets;
    uint32_t bucket_mask;
    uint32_t hand;      /* CLOCK's position in blocks[] */
    uint64_t last_miss; /* the last block a miss read, UINT64_MAX at first */
    struct cache_stats stats;
    uint32_t shard, shards; /* BLK shard `shard` of `shards`: only its blocks are cached */
    uint32_t read_ahead;    /* blocks read after a sequential miss */
    struct tier *tier;      /* the NVM tier whose lines are the blocks, or NULL (DRAM) */
    bool evicted_mapped;    /* a block only mappings saw was evicted (logged the first time) */
    bool every_block_lent;  /* the last miss found no unlent block: the next looks a few steps */
};

/* Allocates `capacity` blocks (>= 2 * CACHE_MAX_RUN) from `memory` (NULL: the
 * heap); 0 or -E_NO_MEMORY / -E_INVALID. */
int cache_init(struct cache *cache, uint32_t capacity, const struct cache_disk *disk,
               const struct cache_memory *memory);
/* The cache over the lines of `tier` (tier.h: prepared), none valid yet;
 * 0 or -E_NO_MEMORY. */
int cache_init_tier(struct cache *cache, struct tier *tier, const struct cache_disk *disk);
/* Frees what cache_init or cache_init_tier allocated (not block ICAs). */
void cache_release(struct cache *cache);
/* Makes the cache shard `shard` of `shards` (formica/blk_stripes.h): it then
 * holds, reads ahead and accepts only that shard's blocks (others:
 * -E_INVALID). A new cache is the one shard of one. */
void cache_set_shard(struct cache *cache, uint32_t shard, uint32_t shards);
/* True when block `number` lies on the disk and in the cache's shard. */
static inline bool cache_owns(const struct cache *cache, uint64_t number)
{
    return number < cache->disk.blocks &&
           (cache->shards <= 1 || blk_shard_of(number, cache->shards) == cache->shard);
}
/* Copies block `number` into `out`, reading it (and maybe more) on a miss. */
int cache_read(struct cache *cache, uint64_t number, void *out);
static inline uint32_t cache_bucket_of(const struct cache *cache, uint64_t number)
{
    return (uint32_t)((number * 0x9e3779b97f4a7c15ull) >> 32) & cache->bucket_mask;
}
/* The cached block `number`, or NULL (inline: every request looks one up). */
static inline struct cache_block *cache_lookup(struct cache *cache, uint64_t number)
{
    struct cache_block *block = cache->buckets[cache_bucket_of(cache, number)];
    while (block != NULL && block->number != number)
        block = block->hash_next;
    return block;
}
/* A use of a cached block: counted as a hit, CLOCK's bit set. */
static inline void cache_note_hit(struct cache *cache, struct cache_block *block)
{
    cache->stats.hits++;
    block->referenced = true;
}
/* The cached block `number`, its use counted (cache_note_hit), or NULL when
 * it is not cached or past the disk. */
static inline struct cache_block *cache_use_cached(struct cache *cache, uint64_t number)
{
    struct cache_block *block = number < cache->disk.blocks ? cache_lookup(cache, number) : NULL;
    if (block != NULL)
        cache_note_hit(cache, block);
    return block;
}
/* tier.h's tier_lend_handle, for a tier's line (apart: a DRAM block's handle is its own). */
uint64_t cache_lend_line(struct cache *cache, struct cache_block *block);
/* The handle to lend `block` with: its own, or (a tier's line) a DRAM copy's; 0: copy it. */
static inline uint64_t cache_lend_handle(struct cache *cache, struct cache_block *block)
{
    if (block->handle != 0 || cache->tier == NULL)
        return block->handle;
    return cache_lend_line(cache, block);
}
/* Block `number` cached for a writable lend (BLK_MAP_WRITABLE): a miss is
 * a write's, so in the tier it waits for a pass rather than bypass into a
 * DRAM block whose stores would be lost. 0 or the error. */
int cache_fill_for_stores(struct cache *cache, uint64_t number);
/* cache_lend of a block that is not cached (or past the disk): read in first. */
int cache_lend_missing(struct cache *cache, uint64_t number, uint64_t *handle);
/* Like cache_read, but gives the block's handle (0 if it has none) instead
 * of a copy. Inline: a cached block (a readblock's) is a hash lookup. */
static inline int cache_lend(struct cache *cache, uint64_t number, uint64_t *handle)
{
    struct cache_block *block = cache_use_cached(cache, number);
    if (block == NULL)
        return cache_lend_missing(cache, number, handle);
    *handle = cache_lend_handle(cache, block);
    return 0;
}
/* Replaces block `number` with `in` and marks it dirty (-E_INVALID for a
 * block the cache does not own). */
int cache_write(struct cache *cache, uint64_t number, const void *in);
/* Writes block `number` back now if it is dirty, with the dirty blocks
 * that follow it (BLK's write-through: docs/recovery.md). */
int cache_write_through(struct cache *cache, uint64_t number);
/* Marks a cached block dirty (counted once until it is written back). */
static inline void cache_mark_dirty(struct cache *cache, struct cache_block *block)
{
    if (!block->dirty) {
        block->dirty = true;
        cache->stats.dirty++;
    }
}
/* True when `length` bytes at `offset` lie inside a block. */
static inline bool cache_range_fits(uint32_t offset, uint32_t length)
{
    return offset <= CACHE_BLOCK_BYTES && length <= CACHE_BLOCK_BYTES - offset;
}
/* A write into a tier's cached line (tier_write_in_place). */
int cache_patch_line(struct cache *cache, struct cache_block *block, uint32_t offset,
                     const void *in, uint32_t length);
/* cache_patch's write into the cached `block` of a DRAM cache, its range checked. */
static inline void cache_patch_block(struct cache *cache, struct cache_block *block,
                                     uint32_t offset, const void *in, uint32_t length)
{
    memcpy_small_inline(block->data + offset, in, length);
    cache_mark_dirty(cache, block);
}
/* cache_patch of a block that is not cached (or past the disk): read in
 * first. Its range is checked by cache_patch. */
int cache_patch_missing(struct cache *cache, uint64_t number, uint32_t offset, const void *in,
                        uint32_t length);
/* Writes `length` bytes at `offset` into block `number` (read first on a
 * miss) and marks it dirty: a DRAM cache's (a tier's: cache_patch_any). 0,
 * or -E_INVALID for a range outside the block or a block past the disk, or
 * the miss's error. Inline: a cached block (a small write's) is a hash
 * lookup and a copy. */
static inline int cache_patch(struct cache *cache, uint64_t number, uint32_t offset, const void *in,
                              uint32_t length)
{
    if (!cache_range_fits(offset, length))
        return -E_INVALID;
    struct cache_block *block = cache_use_cached(cache, number);
    if (block == NULL)
        return cache_patch_missing(cache, number, offset, in, length);
    cache_patch_block(cache, block, offset, in, length);
    return 0;
}
/* cache_patch for a cache that is a tier's or DRAM (apart: BLK's usual small
 * write, cache_patch, is a DRAM cache's and pays no test). */
int cache_patch_any(struct cache *cache, uint64_t number, uint32_t offset, const void *in,
                    uint32_t length);
/* FS freed block `number`: no lent page may show what its next owner
 * writes (docs/storage.md, "Freed blocks and lent pages"). A clean cached
 * copy leaves the hash table (retired), so the block's next use takes a
 * fresh slot; the retired slot keeps the old bytes for whoever borrows it
 * and CLOCK reuses it once nobody does (memory.pinned). A dirty copy that
 * is lent is written back first, then retired (the free may yet be undone
 * by an FS that ends before it commits: the bytes must reach the disk); a
 * dirty one nobody borrows stays in place, to be overwritten. 0, or
 * -E_INVALID for a block of another shard; a failed write-back is logged
 * and its bytes are dropped. */
int cache_retire(struct cache *cache, uint64_t number);
/* A block just lent writable into a mapping (BLK_MAP_WRITABLE): dirty,
 * and write-protected before it is written back (cache_memory's). */
int cache_lent_for_stores(struct cache *cache, uint64_t number);
/* Cached (or retired) blocks lent now, mapping lends included (BLK_STATS). */
uint64_t cache_count_lent(const struct cache *cache);
/* cache_retire of every block lent now (an FS owner that starts does not
 * know what the last one freed without telling). */
void cache_retire_lent(struct cache *cache);
/* Writes every dirty block back (runs of consecutive blocks together), then
 * flushes the disk's write cache: a barrier. */
int cache_sync(struct cache *cache);
/* The bytes of block `number` when it is cached and dirty (not on the disk
 * yet), else NULL; changes nothing (no statistics, no CLOCK bit). */
const uint8_t *cache_dirty_contents(struct cache *cache, uint64_t number);
void cache_get_stats(const struct cache *cache, struct cache_stats *stats);
