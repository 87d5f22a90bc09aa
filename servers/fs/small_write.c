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
    error =
        ext2_in_place_target(&server->fs, file->inode, offset, (uint32_t)length, &block, &within);
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
