/* readblock.c: FS_READBLOCK, the first stage of seed 003's readblock. FS maps
 * the file's blocks to disk blocks, rewrites the control ICA into a BLK_READ
 * for the serve loop to forward to BLK without ICA_RETURN_VIA_ME: BLK's result goes
 * straight back to the application (direct return), from the BLK shard that
 * owns the blocks. Holes, the file's end, blocks of more than one shard (a
 * run across a stripe's end) and file systems of other block sizes are
 * answered here, as FS_READ: FS reads each block from its shard. A block
 * FS borrows from BLK is lent on by FS itself (block_pins.c), unless the
 * boot option fs_lend_on=off asks for seed 003's path. */
#include "fs_server.h"
#include "block_client.h"
#include "block_map_cache.h"
#include "block_pins.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

static uint32_t disk_blocks[STORAGE_MAX_BLOCKS];

/* Answers like FS_READ of the whole range; the rest of the ICA is zeroed. */
static __attribute__((noinline)) long read_here(struct fs_server *server,
                                                const struct ica_control *page, uint32_t inode,
                                                uint64_t first_block, uint64_t bytes)
{
    uint8_t *data = ica_address(page->data[0]);
    long result = ext2_read(&server->fs, inode, first_block * STORAGE_BLOCK_BYTES, data, bytes);
    if (result >= 0 && (uint64_t)result < bytes)
        memset(data + result, 0, bytes - (uint64_t)result);
    return result;
}

static bool consecutive(uint32_t count)
{
    for (uint32_t i = 1; i < count; i++)
        if (disk_blocks[i] != disk_blocks[0] + i)
            return false;
    return true;
}

static bool has_hole(uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (disk_blocks[i] == 0)
            return true;
    return false;
}

/* With BLK as several shards: the shard that owns all `count` mapped
 * blocks becomes the forward's (server->forward_shard); false when they
 * lie in several. Apart: with one BLK the forward's shard is always 0. */
static __attribute__((noinline)) bool route_to_shard(struct fs_server *server, uint32_t count)
{
    uint32_t shard = 0;
    if (!blk_shard_of_list(disk_blocks, count, block_client_shards.count, &shard))
        return false;
    server->forward_shard = shard;
    return true;
}

/* An FS replica's forward carries its view of the shard it goes to, the
 * one that owns its first block (route_to_shard found one shard owning all
 * of them: server->forward_shard). Apart, as the owner has no view; the
 * shard found again here, so the usual forward keeps no server pointer
 * across block_pins_answer's call. */
static __attribute__((noinline, cold)) void stamp_view(struct blk_read_message *read)
{
    block_client_view_stamp(read, block_client_shard_of(disk_blocks[0]));
}

/* The control ICA becomes a BLK_READ of the mapped blocks for the shard
 * that owns them (an FS replica's as of its view); the serve loop forwards
 * it (without ICA_RETURN_VIA_ME) and receives in one call. */
static long prepare_for_blk(uint64_t control, uint32_t count)
{
    struct ica_control *page = ica_control_of(control);
    struct blk_read_message *read = blk_read_of(page);
    page->operation = BLK_READ;
    read->first_block = disk_blocks[0];
    read->blocks = count;
    read->flags = count <= ICA_MAX_ATTACHED ? BLK_LEND : 0; /* zero copy when it fits */
    if (!consecutive(count)) {
        read->flags |= BLK_BLOCK_LIST;
        memcpy(page->payload, disk_blocks, count * sizeof(uint32_t));
    }
    if (__builtin_expect(block_client_view.active, 0))
        stamp_view(read);
    return FS_FORWARDED;
}

/* With the blocks mapped (disk_blocks) and the file's size: the request
 * rewritten for the shard that owns them, or answered here when one shard
 * cannot serve it alone (a hole, the file's end, blocks of two shards, a
 * block the journal holds). `one` is the block map
 * cache's entry of a single remembered block (it remembers the journal's
 * answer), else NULL. */
static inline __attribute__((always_inline)) long
mapped_for_blk(struct fs_server *server, uint64_t control, uint32_t inode, uint64_t first,
               uint32_t count, bool lend_only, uint64_t size, struct block_map_entry *one)
{
    bool at_end = (first + count) * STORAGE_BLOCK_BYTES > size; /* count >= 1 */
    if (at_end && first * STORAGE_BLOCK_BYTES >= size)
        return 0;
    if (at_end || has_hole(count) ||
        (one != NULL ? fs_journal_holds_remembered(server, one)
                     : fs_journal_holds(server, disk_blocks, count)) ||
        (block_client_shards.count > 1 && !route_to_shard(server, count)))
        return lend_only ? -E_NEEDS_DATA
                         : read_here(server, ica_control_of(control), inode, first,
                                     (uint64_t)count * STORAGE_BLOCK_BYTES);
    if (count == 1 && lend_only) { /* no pins with fs_lend_on=off */
        long answer = block_pins_answer(control, disk_blocks[0], server->forward_shard);
        if (answer != BLOCK_NOT_PINNED)
            return answer;
    }
    return prepare_for_blk(control, count);
}

/* map_for_blk for blocks whose mapping is not remembered: the ext2 library
 * asked first (apart, so a remembered mapping needs no spills). */
static __attribute__((noinline)) long look_up_for_blk(struct fs_server *server, uint64_t control,
                                                      uint32_t inode, uint64_t first,
                                                      uint32_t count, bool lend_only)
{
    uint64_t size = 0;
    int error = block_map_cache_look_up(&server->fs, inode, first, count, disk_blocks, &size);
    if (error != 0)
        return error;
    return mapped_for_blk(server, control, inode, first, count, lend_only, size, NULL);
}

/* The blocks mapped, then mapped_for_blk. Inline: fs_readblock's constant
 * count of one leaves no loops, and its one block's entry is passed on. */
static inline __attribute__((always_inline)) long map_for_blk(struct fs_server *server,
                                                              uint64_t control, uint32_t inode,
                                                              uint64_t first, uint32_t count,
                                                              bool lend_only)
{
    uint64_t size = 0;
    struct block_map_entry *last = block_map_cache_recall(inode, first, count, disk_blocks, &size);
    if (last == NULL)
        return look_up_for_blk(server, control, inode, first, count, lend_only);
    return mapped_for_blk(server, control, inode, first, count, lend_only, size,
                          count == 1 ? last : NULL);
}

/* fs_readblock past the handle, in general: any count, a data ICA or not,
 * any block size (apart: the usual readblock is one regular file's block
 * without one). */
static __attribute__((noinline)) long readblock_in_general(struct fs_server *server,
                                                           uint64_t control,
                                                           const struct open_file *file,
                                                           uint64_t first, uint64_t count)
{
    struct ica_control *page = ica_control_of(control);
    if (file->flags & OPEN_FILE_DIRECTORY) {
        fs_refuse(page, "readblock of a directory");
        return -E_IS_DIRECTORY;
    }
    if (count == 0 || count > STORAGE_MAX_BLOCKS)
        return fs_refuse(page, "readblock count out of range");
    if (first > UINT64_MAX / STORAGE_BLOCK_BYTES - count)
        return fs_refuse(page, "readblock range past the largest file offset");
    uint64_t bytes = count * STORAGE_BLOCK_BYTES;
    long checked = fs_check_range(server, page, first * STORAGE_BLOCK_BYTES, bytes);
    if (checked != 0)
        return checked;
    bool lend_only = page->data_count == 0 && count <= ICA_MAX_ATTACHED;
    if (!lend_only && !fs_data_fits(page, bytes))
        return -E_INVALID;
    if (server->fs.block_size != STORAGE_BLOCK_BYTES)
        return lend_only ? -E_NEEDS_DATA : read_here(server, page, file->inode, first, bytes);
    if (count == 1) /* its loops unrolled */
        return map_for_blk(server, control, file->inode, first, 1, lend_only);
    return map_for_blk(server, control, file->inode, first, (uint32_t)count, lend_only);
}

void fs_readblock_read_options(struct fs_server *server)
{
    char value[8] = "";
    server->lend_off =
        kernel_option("fs_lend_on", value, sizeof value) > 0 && strcmp(value, "off") == 0;
    if (server->lend_off)
        printf("fs: fs_lend_on=off: every readblock goes to BLK\n");
}

long fs_readblock_from_blk(struct fs_server *server, uint64_t control, long error)
{
    /* disk_blocks[0] and forward_shard are still the answer's */
    block_pins_refused(disk_blocks[0], server->forward_shard, error);
    ica_control_of(control)->lent_count = 0;
    return prepare_for_blk(control, 1);
}

long fs_readblock(struct fs_server *server, uint64_t control, struct fs_readblock_message *message)
{
    struct ica_control *page = ica_control_of(control);
    uint64_t first = message->first_block, count = message->blocks;
    long checked = 0;
    struct open_file *file = fs_handle_of(server, page, message->handle, OPEN_FILE_READ, &checked);
    if (file == NULL)
        return checked;
    /* The usual readblock: one block of a regular file, only to be lent
     * (no data ICA), on 4 KiB blocks, inside the largest file. On 4 KiB
     * blocks the last test is readblock_in_general's two range checks for
     * one block (ext2_max_file_bytes is max_file_blocks whole blocks, far
     * below an overflow): a block out of range is refused there, and a
     * directory too (tested here with the data count, in one branch). */
    if (count != 1 || page->data_count != 0 || (file->flags & OPEN_FILE_DIRECTORY) ||
        server->fs.block_size != STORAGE_BLOCK_BYTES || first >= server->fs.max_file_blocks)
        return readblock_in_general(server, control, file, first, count);
    return map_for_blk(server, control, file->inode, first, 1, true);
}
