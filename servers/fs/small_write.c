/* small_write.c: FS_WRITE of a few bytes carried in the control ICA's
 * payload (no data ICA). When they overwrite one existing block of the
 * file, FS turns the request into a BLK_PATCH of that disk block and the
 * serve loop forwards it: BLK writes the bytes into its cached block and
 * answers the application directly, the path of a readblock. The inode's
 * times are stamped later (fs_times_flush), before any request that could
 * show them; the rest (growth, holes, two blocks) gets -E_NEEDS_DATA and
 * the library sends the bytes again in a data ICA, the ordinary FS_WRITE.
 * On ext3 a block in the running journal transaction goes that way too:
 * its newest contents are the journal's, and the patch must not bypass it. */
#include "block_client.h"
#include "block_map_cache.h"
#include "ext2_in_place.h"
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>

#define PENDING_TIMES 16

static uint32_t pending[PENDING_TIMES]; /* inodes whose times are owed */
static uint32_t pending_count;

void fs_times_flush(struct fs_server *server)
{
    for (uint32_t i = 0; i < pending_count; i++) {
        int error = ext2_in_place_touch(&server->fs, pending[i]);
        if (error != 0)
            printf("fs: times of inode %u not written: %s\n", pending[i], error_text(error));
    }
    pending_count = 0;
}

static void owe_times(struct fs_server *server, uint32_t inode)
{
    for (uint32_t i = 0; i < pending_count; i++)
        if (pending[i] == inode)
            return;
    if (pending_count == PENDING_TIMES)
        fs_times_flush(server);
    pending[pending_count++] = inode;
}

/* The disk block holding bytes [offset, offset + length) of regular file
 * `inode` and their offset in it, when they lie in one block that exists,
 * inside the file, on a writable file system; -E_NEEDS_DATA when the write
 * must take the ordinary path (a hole, growth, two blocks). Answered from
 * the block map cache (which small writes keep: they move no block and
 * change no size), else by one inode read and a walk of its block tree. */
static int in_place_target(struct fs_server *server, uint32_t inode, uint64_t offset,
                           uint32_t length, uint32_t *block, uint32_t *within)
{
    if (server->fs.read_only)
        return -E_PERMISSION;
    uint64_t size = 0;
    int error = block_map_cache_file_blocks(&server->fs, inode, offset / STORAGE_BLOCK_BYTES, 1,
                                            block, &size);
    if (error != 0)
        return error;
    *within = (uint32_t)(offset % STORAGE_BLOCK_BYTES);
    if (*within + length > STORAGE_BLOCK_BYTES || offset + length > size || *block == 0)
        return -E_NEEDS_DATA;
    return 0;
}

long fs_small_write(struct fs_server *server, uint64_t control, const struct open_file *file,
                    const struct fs_write_message *message)
{
    struct ica_control *page = ica_control_of(control);
    uint64_t offset = message->offset, length = message->length;
    if (length == 0 || length > FS_INLINE_WRITE_BYTES)
        return fs_refuse(page, "inline write length out of range");
    long error = fs_check_range(server, page, offset, length);
    if (error != 0)
        return error;
    if (server->fs.block_size != STORAGE_BLOCK_BYTES)
        return -E_NEEDS_DATA;
    uint32_t block, within;
    error = in_place_target(server, file->inode, offset, (uint32_t)length, &block, &within);
    if (error != 0)
        return error;
    if (fs_journal_holds(server, &block, 1))
        return -E_NEEDS_DATA; /* its newest bytes are in the journal: write through it */
    owe_times(server, file->inode);
    block_client_note_patch(block, within, page->payload, (uint32_t)length);
    page->operation = BLK_PATCH;
    *blk_patch_of(page) = (struct blk_patch_message){block, within, (uint32_t)length};
    return FS_FORWARDED;
}
