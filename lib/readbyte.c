/* readbyte.c: seed 003 Table 1's readbyte, a library call: a per-process,
 * direct-mapped buffer of file blocks; a block's first reference fetches it
 * with readblock, later references ask no server (docs/files.md: coherence). */
#include "file_internal.h"
#include "readbyte_buffer.h"
#include <formica/user.h>
#include <stdlib.h>
#include <string.h>

struct buffered_block readbyte_slots[READBYTE_SLOTS]; /* readbyte_buffer.h */
struct readbyte_counts readbyte_tally;                /* file_internal.h */

static void drop(struct buffered_block *slot)
{
    if (slot->used)
        readbyte_tally.buffered--;
    slot->used = false;
}

/* A buffered block still holds all the bytes the file has there: it is
 * whole, or the file (`file_size`, as the descriptor knows it) ends in it.
 * A partial last block the file has since grown past (a write further on,
 * an fstat that saw another process's) is fetched again. */
static inline bool covers_the_file(const struct buffered_block *slot, uint64_t file_size)
{
    return slot->valid_bytes == STORAGE_BLOCK_BYTES ||
           slot->block * STORAGE_BLOCK_BYTES + slot->valid_bytes >= file_size;
}

/* The block, from the buffer or fetched into it with readblock. */
static long get_block(int fd, uint32_t inode, uint64_t block, uint64_t file_size,
                      struct buffered_block **out)
{
    struct buffered_block *slot = readbyte_find(inode, block);
    if (slot != NULL && covers_the_file(slot, file_size)) {
        readbyte_tally.hits++;
        *out = slot;
        return 0;
    }
    slot = readbyte_slot_of(inode, block);
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

/* Block by block, fetching what is not buffered (apart, so a reference
 * inside one buffered block saves no registers; `fd` is open, and its
 * descriptor is looked up again here rather than kept across the hit's
 * path). */
static __attribute__((noinline)) long read_blocks(int fd, size_t size, uint64_t offset,
                                                  void *buffer)
{
    const struct file_descriptor *file = &file_descriptors[fd];
    size_t done = 0;
    while (done < size) {
        uint64_t position = offset + done;
        uint32_t within = (uint32_t)(position % STORAGE_BLOCK_BYTES);
        struct buffered_block *slot;
        long error = get_block(fd, file->inode, position / STORAGE_BLOCK_BYTES, file->size, &slot);
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
    struct buffered_block *hit = readbyte_hit_in_one_block(file->inode, offset, size);
    if (hit == NULL)
        return read_blocks(fd, size, offset, buffer);
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

void readbyte_update_by_blocks(uint32_t inode, uint64_t offset, const void *data, size_t length)
{
    size_t done = 0;
    while (done < length) {
        uint64_t position = offset + done;
        uint32_t within = (uint32_t)(position % STORAGE_BLOCK_BYTES);
        uint32_t piece = STORAGE_BLOCK_BYTES - within;
        if (piece > length - done)
            piece = (uint32_t)(length - done);
        struct buffered_block *slot = readbyte_find(inode, position / STORAGE_BLOCK_BYTES);
        if (slot != NULL)
            update_block(slot, within, (const uint8_t *)data + done, piece);
        done += piece;
    }
}

void readbyte_forget_inode(uint32_t inode)
{
    if (readbyte_tally.buffered == 0)
        return;
    for (uint32_t i = 0; i < READBYTE_SLOTS; i++)
        if (readbyte_slots[i].used && readbyte_slots[i].inode == inode)
            drop(&readbyte_slots[i]);
}

void readbyte_forget_all(void)
{
    for (uint32_t i = 0; i < READBYTE_SLOTS; i++)
        drop(&readbyte_slots[i]);
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
