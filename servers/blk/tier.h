/* tier.h: BLK's cache in persistent memory (docs/design.md, "The VEMS tier
 * in front of the disk"; docs/storage.md, "The NVM tier"). With --nvm-tier
 * the cache's slots are page-sized lines of an NVDIMM, set-associative, each
 * with an 8-byte tag kept apart from the data; every change reaches the
 * NVDIMM in the order that lets a reboot find it (tier_lines.c), dirty lines
 * go to the disk in global write-back passes (tier_pass.c), and a mount
 * checks whose disk the tier was written for (tier_layout.c). Plain C over
 * the cache's disk callbacks and a mapped region, so the host tests run it. */
#pragma once
#include "cache.h"
#include <formica/blk_tier.h>
#include <formica/nvm_identity.h>
#include <stdbool.h>
#include <stdint.h>

#define TIER_MAGIC 0x524549544d524f46ull /* "FORMTIER" */
#define TIER_VERSION 1u
#define TIER_HEADER_BYTES 4096u /* unit 0: the identity header's pair of slots */
#define TIER_DEFAULT_SETS 16u
#define TIER_MIN_WAYS 64u    /* lines per set per shard at least */
#define TIER_RUN_BLOCKS 64u  /* a write-back run: up to 256 KiB */
#define TIER_READ_AHEAD 32u  /* blocks read ahead on a sequential miss */
#define TIER_STREAM_MIN 64u  /* a write stream shorter than this never bypasses */
#define TIER_LEND_POOL 256u  /* DRAM blocks a line's bytes are copied into to be lent */
#define TIER_IDLE_MS 5000u   /* a pass after this long without a request */
#define TIER_BOUND_MAX 2048u /* lines bound to block ICAs of their own at once */

/* The tag of a line: the block (48 bits), the state (2 bits), a 14-bit
 * check of the rest and the line's index. A free line's tag is 0. */
#define TIER_TAG_BLOCK_BITS 48
#define TIER_TAG_BLOCK_MASK ((1ull << TIER_TAG_BLOCK_BITS) - 1)
enum tier_line_state { TIER_FREE = 0, TIER_CLEAN = 1, TIER_DIRTY = 2 };

/* geometry[] of the identity header. */
enum {
    TIER_GEOMETRY_SETS,
    TIER_GEOMETRY_SHARDS,
    TIER_GEOMETRY_LINES,
    TIER_GEOMETRY_FLAGS,
    TIER_GEOMETRY_LINES_OFFSET
};
/* geometry[TIER_GEOMETRY_FLAGS]: `tier detach` wrote everything back, the
 * next attach starts clean. */
#define TIER_FLAG_DETACHED 1u

/* The identity bytes: whose disk. */
struct tier_disk_identity {
    uint64_t sectors;
    uint8_t serial[20]; /* DK_INFO's (zeros when the device gives none) */
    uint32_t reserved;
    uint64_t fingerprint; /* kept_checksum of disk block 0 as the disk holds it */
    uint64_t reserved2;
};
_Static_assert(sizeof(struct tier_disk_identity) == NVM_IDENTITY_BYTES, "the identity's 48 bytes");
#define TIER_IDENTITY_COMPARED 32u /* sectors and serial: another disk; the fingerprint apart */

/* Where the DRAM blocks of lends and bypassed reads come from (BLK: block
 * ICAs; the host tests: the heap). */
struct tier_pool {
    uint8_t *data[TIER_LEND_POOL];
    uint64_t handle[TIER_LEND_POOL];
    uint32_t line[TIER_LEND_POOL]; /* the line (+ 1) whose copy it is now, 0: none */
    uint32_t count, next;
};

struct tier {
    uint8_t *base; /* the mapped NVDIMM */
    uint64_t bytes;
    struct nvm_identity *header; /* the pair of slots at base */
    uint64_t *tags;
    uint8_t *lines;
    uint32_t sets, ways, lines_count, shards;
    uint32_t *hands; /* CLOCK's hand in each set */
    enum blk_tier_state state;
    bool write_through;
    char refusal[160]; /* why the tier was refused */
    struct tier_disk_identity identity;
    struct tier_pool pool;
    struct cache_block bypass;           /* a read that no line could take, in a pool block */
    uint64_t stream_next, stream_length; /* the sequential write stream so far */
    uint64_t bypasses, passes, pass_failures, writeback_runs, writeback_bytes, fills;
    uint32_t *bound_lines;              /* the lines bound to block ICAs (TIER_BOUND_MAX) */
    uint32_t bound_count, bound_hand;   /* how many, and where recycling looks next */
    uint64_t direct_binds, lend_copies; /* lines bound for a lend; lends copied to DRAM */
    uint64_t mapped_evictions;          /* clean lines taken from mappings (revoked) */
    uint64_t *pass_order;               /* a pass's dirty blocks, sorted */
    uint32_t *pass_lines;               /* and the line of each */
};

/* The tag of line `line` holding `block` in `state` (0 when free). */
uint64_t tier_tag(uint32_t line, uint64_t block, enum tier_line_state state);
/* Decodes a tag: false when it is torn or scribbled (its check fails, or its
 * state is not one of the three). */
bool tier_tag_decode(uint32_t line, uint64_t tag, uint64_t *block, enum tier_line_state *state);
/* The set of `block` (a stripe of 64 blocks stays in one set). */
static inline uint32_t tier_set_of(const struct tier *tier, uint64_t block)
{
    return (uint32_t)((block / BLK_STRIPE_BLOCKS / tier->shards) % tier->sets);
}
static inline uint8_t *tier_line_data(const struct tier *tier, uint32_t line)
{
    return tier->lines + (uint64_t)line * CACHE_BLOCK_BYTES;
}

/* tier_layout.c: lines that fit `bytes` with `sets` sets (a multiple of
 * sets), 0 when fewer than TIER_MIN_WAYS per set per shard. */
uint32_t tier_lines_for(uint64_t bytes, uint32_t sets, uint32_t shards);
/* Mounts the prepared tier as `cache` (cache_init_tier first, so its blocks
 * are the lines): checks the header and its identity, formats a blank
 * NVDIMM (or a detached one), reads every tag into the cache's hash index.
 * tier->state says the outcome: BLK_TIER_ATTACHED, or BLK_TIER_REFUSED with
 * tier->refusal (nothing written to the NVDIMM or the disk). */
void tier_mount(struct tier *tier, struct cache *cache);
/* Prepares `tier` over the mapping [base, base + bytes): the geometry (a
 * found header's sets, else `sets`), the disk's identity (its size, its
 * 20-byte `serial` or NULL, its block 0 read); 0, or -E_NO_SPACE when the
 * NVDIMM is too small (state BLK_TIER_TOO_SMALL, tier->refusal says so),
 * or the disk's error. */
int tier_prepare(struct tier *tier, uint8_t *base, uint64_t bytes, uint32_t sets, uint32_t shards,
                 const struct cache_disk *disk, const uint8_t *serial);
/* A DRAM block for the pool of lends and bypassed reads (up to TIER_LEND_POOL). */
void tier_pool_add(struct tier *tier, uint8_t *data, uint64_t handle);
/* Frees what tier_prepare allocated (not the pool's blocks). */
void tier_release(struct tier *tier);
/* Formats the tier for this disk, every line free (`tier format`). */
int tier_format(struct tier *tier, struct cache *cache);
/* Writes the identity header anew (tier->identity, `flags`), as the newer
 * of its pair of slots. */
void tier_write_header(struct tier *tier, uint64_t flags);

/* tier_lines.c: the cache's steps on lines, each durable in order. */
/* A line for block `number` in its set, free (its old tag freed, persisted)
 * and busy: 0, or -E_BUSY when every line of the set is dirty, busy or lent
 * (`revoke_mappings`: a clean line only mappings see is taken, its mappings
 * revoked; never for read-ahead, which must not unmap a process's pages). */
int tier_take_line(struct cache *cache, uint64_t number, bool revoke_mappings,
                   struct cache_block **slot);
/* Lines [slots] filled from the disk: their data persisted, then their tags (clean). */
void tier_filled(struct cache *cache, struct cache_block *const *slots, uint32_t count);
/* `length` bytes at `offset` into the cached line `block` (in place: its
 * tag dirty first, persisted; the data flushed, not fenced). */
int tier_write_in_place(struct cache *cache, struct cache_block *block, uint32_t offset,
                        const void *in, uint32_t length);
/* Block `number`, not cached, written whole into a new line (the data
 * persisted before its tag names it), or bypassed to the disk as part of a
 * long sequential stream; a write that finds no line waits for a pass, and
 * goes to the disk if the set still has none (every clean line's copy lent:
 * the pass left nothing dirty, so the order is kept). */
int tier_write_new(struct cache *cache, uint64_t number, const void *in);
/* A patch of an uncached block whose set has no line even after a pass
 * (every clean line's copy lent): read, patched, written to the disk. */
int tier_patch_around(struct cache *cache, uint64_t number, uint32_t offset, const void *in,
                      uint32_t length);
/* A read miss no line could take: into a pool block, not cached. */
int tier_bypass_read(struct cache *cache, uint64_t number, struct cache_block **found);
/* BLK_SYNC: one fence; then a pass when half the lines are dirty (in
 * write-through mode always: its lines are on the disk already, so the
 * pass is DK_FLUSH, then their tags clean). */
int tier_barrier(struct cache *cache);
/* The handle of a DRAM block holding `block`'s bytes for a lend: a pool
 * block nobody borrows, bound to the line (block->copy, block->handle) and
 * kept equal to it by every write, as a DRAM slot is (FS keeps lent blocks
 * pinned across requests); 0 when none is free (the caller copies). A line
 * whose copy is lent is never a victim. */
uint64_t tier_lend_handle(struct cache *cache, struct cache_block *block);
/* FS freed `block`: its copy (if any) leaves it, keeping the old bytes for
 * whoever borrows it (docs/storage.md, "Freed blocks and lent pages"). */
void tier_unbind_copy(struct cache *cache, struct cache_block *block);
/* FS freed `block`, a line lent itself: a pass first when it is dirty, then
 * its tag freed (persisted) and the line out of the index, its bytes kept
 * for the borrower (mappings ended); it is a victim once nobody borrows it. */
void tier_retire_lent_line(struct cache *cache, struct cache_block *block);
/* BLK_MAP lent the line `block` writable (BLK_MAP_WRITABLE): its tag dirty
 * first (persisted), as for a write, since the process's stores land in
 * it; -E_BUSY when the lend was a copy (no line could be bound), whose
 * stores would be lost. */
int tier_lent_for_stores(struct cache *cache, struct cache_block *block);
/* The process's stores into lines lent writable sit in the CPU's cache:
 * each such line flushed (not fenced); before a pass (`write_protect`) its
 * mappings made read-only first, so the next store faults and dirties it
 * again. */
void tier_flush_mapped_stores(struct cache *cache, bool write_protect);

/* tier_pass.c: a write-back pass of every dirty line: sorted by block,
 * coalesced into runs of up to TIER_RUN_BLOCKS, written, DK_FLUSH, then the
 * tags clean (block 0's fingerprint first). A failed run's lines stay dirty
 * and are logged. 0 or the first error. */
int tier_pass(struct cache *cache);
/* The state of `tier` (NULL: none) and, while it is `cache`'s, its counters. */
void tier_report(const struct tier *tier, const struct cache *cache,
                 struct blk_tier_report *report);
