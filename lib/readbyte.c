/* readbyte.c: seed 003 Table 1's readbyte, a library call: a per-process,
 * direct-mapped buffer of file blocks; a block's first reference fetches it
 * with readblock, later references ask no server (docs/files.md: coherence). */
#include "file_internal.h"
#include <formica/small_copy.h>
#include <formica/user.h>
#include <stdlib.h>
#include <string.h>

#define READBYTE_SLOTS 1024u /* at most 4 MiB of buffered blocks */

struct buffered_block {
    bool used;
    uint32_t inode;
    uint32_t valid_bytes; /* < STORAGE_BLOCK_BYTES only in the file's last block */
    uint64_t block;
    uint8_t *bytes;
};

static struct buffered_block slots[READBYTE_SLOTS];
struct readbyte_counts readbyte_tally; /* file_internal.h */

static struct buffered_block *slot_of(uint32_t inode, uint64_t block)
{
    return &slots[(block + (uint64_t)inode * 2654435761u) % READBYTE_SLOTS];
}

static struct buffered_block *find(uint32_t inode, uint64_t block)
{
    struct buffered_block *slot = slot_of(inode, block);
    return slot->used && slot->inode == inode && slot->block == block ? slot : NULL;
}

static void drop(struct buffered_block *slot)
{
    if (slot->used)
        readbyte_tally.buffered--;
    slot->used = false;
}

/* The block, from the buffer or fetched into it with readblock. */
static long get_block(int fd, uint32_t inode, uint64_t block, struct buffered_block **out)
{
    struct buffered_block *slot = find(inode, block);
    if (slot != NULL) {
        readbyte_tally.hits++;
        *out = slot;
        return 0;
    }
    slot = slot_of(inode, block);
    if (slot->bytes == NULL && (slot->bytes = malloc(STORAGE_BLOCK_BYTES)) == NULL)
        return -E_NO_MEMORY;
    const void *data;
    long bytes = readblock(fd, 1, block, &data);
    if (bytes < 0)
        return bytes;
    readbyte_tally.fetches++;
    drop(slot);
    memcpy(slot->bytes, data, (size_t)bytes);
    slot->used = true;
    slot->inode = inode;
    slot->block = block;
    slot->valid_bytes = (uint32_t)bytes;
    readbyte_tally.buffered++;
    *out = slot;
    return 0;
}

/* The buffered block holding all of [offset, offset + size) (size > 0), or
 * NULL: the common reference, answered without the loop below. */
static inline struct buffered_block *hit_in_one_block(uint32_t inode, uint64_t offset, size_t size)
{
    uint32_t within = (uint32_t)(offset % STORAGE_BLOCK_BYTES);
    if (size == 0 || size > STORAGE_BLOCK_BYTES - within)
        return NULL;
    struct buffered_block *slot = find(inode, offset / STORAGE_BLOCK_BYTES);
    return slot != NULL && within + size <= slot->valid_bytes ? slot : NULL;
}

/* Block by block, fetching what is not buffered (apart, so a reference
 * inside one buffered block saves no registers). */
static __attribute__((noinline)) long read_blocks(int fd, uint32_t inode, size_t size,
                                                  uint64_t offset, void *buffer)
{
    size_t done = 0;
    while (done < size) {
        uint64_t position = offset + done;
        uint32_t within = (uint32_t)(position % STORAGE_BLOCK_BYTES);
        struct buffered_block *slot;
        long error = get_block(fd, inode, position / STORAGE_BLOCK_BYTES, &slot);
        if (error != 0)
            return done > 0 ? (long)done : error;
        if (slot->valid_bytes <= within)
            break;
        size_t piece = slot->valid_bytes - within;
        if (piece > size - done)
            piece = size - done;
        memcpy((uint8_t *)buffer + done, slot->bytes + within, piece);
        done += piece;
        if (slot->valid_bytes < STORAGE_BLOCK_BYTES)
            break;
    }
    return (long)done;
}

long readbyte(int fd, size_t size, uint64_t offset, void *buffer)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || buffer == NULL || !file_can_read(file))
        return -E_INVALID;
    if (offset >= file->size)
        return 0;
    if (size > file->size - offset)
        size = (size_t)(file->size - offset);
    struct buffered_block *hit = hit_in_one_block(file->inode, offset, size);
    if (hit == NULL)
        return read_blocks(fd, file->inode, size, offset, buffer);
    readbyte_tally.hits++;
    memcpy(buffer, hit->bytes + offset % STORAGE_BLOCK_BYTES, size);
    return (long)size;
}

long writebyte(int fd, size_t size, uint64_t offset, const void *data)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || data == NULL || !file_can_write(file))
        return -E_INVALID;
    return file_write_at(file, data, size, offset);
}

/* Copies the written bytes into a buffered block; a write that would leave a
 * hole after its valid bytes drops the block instead. */
static inline void update_block(struct buffered_block *slot, uint32_t within, const uint8_t *data,
                                uint32_t length)
{
    if (within > slot->valid_bytes) {
        drop(slot);
        return;
    }
    if (within + length > slot->valid_bytes)
        slot->valid_bytes = within + length;
    memcpy(slot->bytes + within, data, length); /* last: a tail call */
}

/* readbyte_update_buffered block by block: every case (apart: a write
 * inside a buffered block's valid bytes is the usual small one). */
static __attribute__((noinline)) void update_by_blocks(uint32_t inode, uint64_t offset,
                                                       const void *data, size_t length)
{
    size_t done = 0;
    while (done < length) {
        uint64_t position = offset + done;
        uint32_t within = (uint32_t)(position % STORAGE_BLOCK_BYTES);
        uint32_t piece = STORAGE_BLOCK_BYTES - within;
        if (piece > length - done)
            piece = (uint32_t)(length - done);
        struct buffered_block *slot = find(inode, position / STORAGE_BLOCK_BYTES);
        if (slot != NULL)
            update_block(slot, within, (const uint8_t *)data + done, piece);
        done += piece;
    }
}

/* The buffered blocks that [offset, offset + length) overlaps take the new
 * bytes (readbyte_note_write's, when any are buffered; `length` at most a
 * piece of the channel). A write inside the valid bytes of one buffered
 * block, the usual small one, is one look-up and one copy. */
void readbyte_update_buffered(uint32_t inode, uint64_t offset, const void *data, size_t length)
{
    uint32_t within = (uint32_t)(offset % STORAGE_BLOCK_BYTES);
    struct buffered_block *slot = find(inode, offset / STORAGE_BLOCK_BYTES);
    if (slot != NULL && within + length <= slot->valid_bytes) /* inside one block */
        memcpy_small_inline(slot->bytes + within, data, length);
    else
        update_by_blocks(inode, offset, data, length);
}

void readbyte_forget_inode(uint32_t inode)
{
    if (readbyte_tally.buffered == 0)
        return;
    for (uint32_t i = 0; i < READBYTE_SLOTS; i++)
        if (slots[i].used && slots[i].inode == inode)
            drop(&slots[i]);
}

void readbyte_forget_all(void)
{
    for (uint32_t i = 0; i < READBYTE_SLOTS; i++)
        drop(&slots[i]);
}

long readbyte_invalidate(int fd)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL)
        return -E_INVALID;
    readbyte_forget_inode(file->inode);
    return 0;
}

void readbyte_counts_get(struct readbyte_counts *out)
{
    *out = readbyte_tally;
}
