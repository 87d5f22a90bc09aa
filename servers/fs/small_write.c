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

/* Adds `inode` to the owed times (apart: it usually is there already). */
static void owe_times_anew(struct fs_server *server, uint32_t inode)
{
    if (pending_count == PENDING_TIMES)
        fs_times_flush(server);
    pending[pending_count++] = inode;
}

static inline void owe_times(struct fs_server *server, uint32_t inode)
{
    for (uint32_t i = 0; i < pending_count; i++)
        if (pending[i] == inode)
            return;
    owe_times_anew(server, inode);
}

/* With the bytes' disk block `block` and the file's size: the request
 * rewritten into a BLK_PATCH when they lie in that one block, inside the
 * file, outside the running journal transaction; else -E_NEEDS_DATA.
 * `remembered` is the block map cache's entry of the block (it remembers
 * the journal's answer), or NULL. */
static inline long patch_in_place(struct fs_server *server, struct ica_control *page,
                                  uint32_t inode, uint64_t offset, uint32_t length, uint32_t block,
                                  uint64_t size, struct block_map_entry *remembered)
{
    uint32_t within = (uint32_t)(offset % STORAGE_BLOCK_BYTES);
    if (within + length > STORAGE_BLOCK_BYTES || offset + length > size || block == 0)
        return -E_NEEDS_DATA;
    if (remembered != NULL ? fs_journal_holds_remembered(server, remembered)
                           : fs_journal_holds(server, &block, 1))
        return -E_NEEDS_DATA; /* its newest bytes are in the journal: write through it */
    page->operation = BLK_PATCH;
    *blk_patch_of(page) = (struct blk_patch_message){block, within, length};
    if (block_client_shards.count > 1)
        server->forward_shard = block_client_shard_of(block);
    block_client_note_patch(block, within, page->payload, length);
    if (server->publisher != NULL)
        fs_publish_patch(server, block); /* before the patch can be answered */
    owe_times(server, inode);
    return FS_FORWARDED;
}

/* patch_in_place for a block whose mapping is not remembered: the ext2
 * library asked first (apart, so a remembered mapping needs no spills). */
static long look_up_and_patch(struct fs_server *server, struct ica_control *page, uint32_t inode,
                              uint64_t offset, uint32_t length)
{
    uint32_t block = 0;
    uint64_t size = 0;
    int error =
        block_map_cache_look_up(&server->fs, inode, offset / STORAGE_BLOCK_BYTES, 1, &block, &size);
    if (error != 0)
        return error;
    return patch_in_place(server, page, inode, offset, length, block, size, NULL);
}

/* Where the bytes go: the disk block holding [offset, offset + length) of
 * regular file `inode`, from the block map cache (which small writes keep:
 * they move no block and change no size), else by one inode read and a
 * walk of its block tree; then patch_in_place. A hole, growth or two
 * blocks take the ordinary path (-E_NEEDS_DATA). */
long fs_small_write(struct fs_server *server, uint64_t control,
                    const struct fs_write_message *message)
{
    struct ica_control *page = ica_control_of(control);
    long error = 0;
    const struct open_file *file =
        fs_regular_file_of(server, page, message->handle, OPEN_FILE_WRITE, &error);
    if (file == NULL)
        return error;
    uint64_t offset = message->offset, length = message->length;
    if (length == 0 || length > FS_INLINE_WRITE_BYTES)
        return fs_refuse(page, "inline write length out of range");
    if (fs_check_range_refuses(server, offset, length))
        return fs_refuse_range(server, page, offset, length);
    if (server->fs.block_size != STORAGE_BLOCK_BYTES)
        return -E_NEEDS_DATA;
    if (server->fs.read_only)
        return -E_READ_ONLY;
    struct block_map_entry *entry = block_map_cache_find(file->inode, offset / STORAGE_BLOCK_BYTES);
    if (entry == NULL)
        return look_up_and_patch(server, page, file->inode, offset, (uint32_t)length);
    return patch_in_place(server, page, file->inode, offset, (uint32_t)length, entry->disk_block,
                          entry->size, entry);
}
