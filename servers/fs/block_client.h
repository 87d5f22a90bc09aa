/* block_client.h: FS's way to BLK: an ext2_device whose blocks are read and
 * written with synchronous BLK_READ / BLK_WRITE requests to the shard that
 * owns each, and BLK_SYNC to every shard. */
#pragma once
#include "ext2.h"
#include <formica/blk_shards.h>
#include <formica/small_copy.h>
#include <formica/storage.h>
#include <stdbool.h>
#include <stdint.h>

/* Finds every BLK shard and prepares FS's own control and data ICAs; 0 or
 * an error. */
int block_client_open(struct ext2_device *device);
/* BLK's shards as FS knows them (the readblock forward takes their pids). */
extern struct blk_shards block_client_shards;
/* The shard that owns `disk_block`. Inline: every forward asks. */
static inline uint32_t block_client_shard_of(uint64_t disk_block)
{
    return blk_shard_of(disk_block, block_client_shards.count);
}

/* FS's write-through copies of the disk blocks it used last (block_client.c),
 * direct-mapped by disk block number: 512 KiB. */
#define RECENT_BLOCKS 128u
struct recent_block {
    bool valid;
    uint64_t disk_block;
    uint8_t bytes[STORAGE_BLOCK_BYTES];
};
extern struct recent_block block_client_recent[RECENT_BLOCKS];
static inline struct recent_block *block_client_recent_slot(uint64_t disk_block)
{
    return &block_client_recent[disk_block % RECENT_BLOCKS];
}
/* Bytes written into disk block `disk_block` by BLK itself (BLK_PATCH):
 * FS's recent copy of that block, if it keeps one, gets them too. Inline:
 * every small write asks. */
static inline void block_client_note_patch(uint64_t disk_block, uint32_t offset, const void *bytes,
                                           uint32_t length)
{
    struct recent_block *slot = block_client_recent_slot(disk_block);
    if (slot->valid && slot->disk_block == disk_block && offset + length <= STORAGE_BLOCK_BYTES)
        memcpy_small_inline(slot->bytes + offset, bytes, length);
}
/* Drops FS's recent copy of `disk_block`, if it keeps one. */
void block_client_forget(uint64_t disk_block);
/* Drops FS's copy of `disk_block` and keeps none from now on (a block lent
 * writable into a mapping). */
void block_client_never_remember(uint64_t disk_block);
/* Drops every recent copy (an FS replica that fell behind the owner). */
void block_client_forget_all(void);
/* `length` bytes at `within` in file-system block `block` of `device`,
 * read from BLK without the recent copies (neither used nor filled): what
 * an FS replica reads of files' contents, which the owner may change in
 * BLK without FS (BLK_PATCH). 0 or an error. */
int block_client_read_uncached(const struct ext2_device *device, uint64_t block, uint32_t within,
                               void *buffer, uint32_t length);
/* Every dirty block of every BLK shard to the disk, each shard's sync
 * answered before this returns (a barrier of the journal); 0 or an error. */
long block_client_sync(void);
/* The shard `shard` that replaced `gone` (a restart), waited for; used by
 * the readblock forward. < 0 if it does not come back. */
long block_client_reconnect(uint32_t shard, long gone);
/* BLK_RETIRE of `count` disk blocks (all of shard `shard`) as of
 * `sequence`, with `flags`; retried over the shard's restart. 0 or an error. */
long block_client_retire(uint32_t shard, const uint32_t *blocks, uint32_t count, uint64_t sequence,
                         uint32_t flags);

/* An FS replica's view of the file system (docs/storage.md, "FS
 * replicas"): the owner's operation log applied up to `as_of`, and each
 * shard's pid at that moment. While `active`, every BLK_READ it sends
 * carries them (BLK_AS_OF): a block freed since, or a shard restarted since,
 * is refused with -E_STALE, and the replica looks again. */
struct block_client_view {
    bool active;
    uint64_t as_of;
    long shards[SERVER_INSTANCES_MAX];
};
extern struct block_client_view block_client_view;
/* The view is now as of `as_of` (an FS replica, before each request). */
void block_client_view_set(uint64_t as_of);
/* A BLK_READ to shard `shard` marked with the view, if there is one.
 * Inline: every readblock forward asks. */
static inline void block_client_view_stamp(struct blk_read_message *read, uint32_t shard)
{
    if (!block_client_view.active)
        return;
    read->flags |= BLK_AS_OF;
    read->as_of = block_client_view.as_of;
    read->as_of_shard = (uint64_t)block_client_view.shards[shard];
}
