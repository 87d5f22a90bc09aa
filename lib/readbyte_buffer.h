/* readbyte_buffer.h: readbyte's per-process buffer of file blocks (direct-
 * mapped slots, readbyte.c) as the library's own writes see it: inline, so a
 * small write inside one buffered block updates it with a look-up and a copy. */
#pragma once
#include "file_internal.h"
#include <formica/small_copy.h>
#include <formica/storage.h>
#include <stdbool.h>
#include <stdint.h>

#define READBYTE_SLOTS 1024u /* at most 4 MiB of buffered blocks */

struct buffered_block {
    bool used;
    uint32_t inode;
    uint32_t valid_bytes; /* < STORAGE_BLOCK_BYTES only in the file's last block */
    uint64_t block;
    uint8_t *bytes;
};

extern struct buffered_block readbyte_slots[READBYTE_SLOTS];

static inline struct buffered_block *readbyte_slot_of(uint32_t inode, uint64_t block)
{
    return &readbyte_slots[(block + (uint64_t)inode * 2654435761u) % READBYTE_SLOTS];
}

static inline struct buffered_block *readbyte_find(uint32_t inode, uint64_t block)
{
    struct buffered_block *slot = readbyte_slot_of(inode, block);
    return slot->used && slot->inode == inode && slot->block == block ? slot : NULL;
}

/* The buffered block holding all of [offset, offset + size) (size > 0), or
 * NULL: the common reference, and the common small write. */
static inline struct buffered_block *readbyte_hit_in_one_block(uint32_t inode, uint64_t offset,
                                                               size_t size)
{
    uint32_t within = (uint32_t)(offset % STORAGE_BLOCK_BYTES);
    if (size - 1 >= STORAGE_BLOCK_BYTES - within) /* size 0 too: it wraps */
        return NULL;
    struct buffered_block *slot = readbyte_find(inode, offset / STORAGE_BLOCK_BYTES);
    return slot != NULL && within + size <= slot->valid_bytes ? slot : NULL;
}

/* The buffered blocks [offset, offset + length) overlaps take the new bytes,
 * block by block (readbyte.c; a write that would leave a hole after a
 * block's valid bytes drops that block). */
void readbyte_update_by_blocks(uint32_t inode, uint64_t offset, const void *data, size_t length);

/* The process's own write of `length` bytes at `offset` (at most a piece of
 * the channel) reaches readbyte's buffer: nothing when nothing is buffered; a
 * write inside one buffered block's valid bytes, the usual small one, is one
 * look-up and one copy. */
static inline void readbyte_note_write(uint32_t inode, uint64_t offset, const void *data,
                                       size_t length)
{
    if (readbyte_tally.buffered == 0)
        return;
    struct buffered_block *slot = readbyte_hit_in_one_block(inode, offset, length);
    if (slot != NULL)
        memcpy_small_inline(slot->bytes + offset % STORAGE_BLOCK_BYTES, data, length);
    else
        readbyte_update_by_blocks(inode, offset, data, length);
}
