/* readblock.c: seed 003 Table 1's readblock, a system call in spirit: every
 * call is one FS_READBLOCK request (AP -> FS -> BLK -> AP, direct return),
 * nothing is kept in the process; and writeblock, its write counterpart.
 * A few blocks are asked for without a data ICA: BLK lends the cached blocks
 * themselves, so nothing is handed over; only when FS or BLK would have to
 * copy (holes, the file's end, an uncached block) is it asked again with one. */
#include "file_internal.h"
#include <formica/user.h>

/* One FS_READBLOCK request with a data ICA for the blocks. */
static long ask_fs_with_data(uint64_t handle, uint64_t size, uint64_t blkoff)
{
    long error = file_channel_begin(FS_READBLOCK, size * STORAGE_BLOCK_BYTES);
    if (error != 0)
        return error;
    *fs_readblock_of(file_channel_page()) = (struct fs_readblock_message){handle, blkoff, size};
    return file_channel_call(true);
}

/* Where the `bytes` a readblock of `size` blocks brought are (clamped to
 * the blocks asked for): *data, and the count; a result without data is a
 * server bug. `page` is the channel's control page. */
static inline long readblock_result(const struct ica_control *page, uint64_t size, long bytes,
                                    const void **data)
{
    uint64_t wanted = size * STORAGE_BLOCK_BYTES;
    if ((uint64_t)bytes > wanted)
        bytes = (long)wanted;
    *data = bytes > 0 ? file_channel_result_data(page, (uint64_t)bytes) : NULL;
    if (bytes > 0 && *data == NULL)
        return -E_INVALID;
    return bytes;
}

/* readblock from the outcome of its lend-only request (-E_NEEDS_DATA when
 * none was made): asked again with a data ICA when lending would not do. */
static long readblock_from(uint64_t handle, uint64_t size, uint64_t blkoff, const void **data,
                           long bytes)
{
    if (bytes == -E_STALE) /* a replica's view was too old: the owner answers */
        bytes = file_channel_request3_at_owner(FS_READBLOCK, handle, blkoff, size);
    if (bytes == -E_NEEDS_DATA)
        bytes = ask_fs_with_data(handle, size, blkoff);
    if (bytes < 0)
        return bytes;
    return readblock_result(file_channel_page(), size, bytes, data);
}

/* readblock of a size the usual request does not take (none, or more
 * blocks than can be lent): refused, or asked for with a data ICA at once. */
static long readblock_of_many(uint64_t handle, uint64_t size, uint64_t blkoff, const void **data)
{
    if (size == 0 || size > READBLOCK_MAX_BLOCKS)
        return -E_INVALID;
    return readblock_from(handle, size, blkoff, data, -E_NEEDS_DATA);
}

/* readblock of a few blocks while the channel is not ready for the usual
 * request: the lend-only request the general way. */
static long readblock_unready(uint64_t handle, uint64_t size, uint64_t blkoff, const void **data)
{
    long bytes = file_channel_request3(FS_READBLOCK, handle, blkoff, size); /* lent */
    return readblock_from(handle, size, blkoff, data, bytes);
}

/* readblock's lend-only request, sent, when FS's answer is not one to take
 * as it stands. */
static long readblock_sent(uint64_t handle, uint64_t size, uint64_t blkoff, const void **data,
                           long sent)
{
    long bytes = file_channel_request3_outcome(FS_READBLOCK, handle, blkoff, size, sent);
    return readblock_from(handle, size, blkoff, data, bytes);
}

/* The usual readblock (a few blocks, a ready channel, one lent block as
 * the answer) makes no call but its system call: every other case goes on
 * apart, each of its conditions tested once on the way. */
long readblock(int fd, uint32_t size, uint64_t blkoff, const void **data)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || data == NULL || !file_can_read(file))
        return -E_INVALID;
    uint64_t handle = file->handle;
    if (size - 1 >= ICA_MAX_ATTACHED) /* size 0 too: refused there */
        return readblock_of_many(handle, size, blkoff, data);
    if (!file_channel_ready())
        return readblock_unready(handle, size, blkoff, data);
    uint64_t control = file_channel_control;
    long sent = file_channel_send3_ready(control, FS_READBLOCK, handle, blkoff, size);
    const struct ica_control *page = ica_control_of(control);
    if (!file_channel_answered_alone(page, sent))
        return readblock_sent(handle, size, blkoff, data, sent);
    long bytes = page->result;
    if (bytes < 0 || page->lent_count != 1) /* the usual answer: one lent block */
        return readblock_from(handle, size, blkoff, data, bytes);
    return readblock_result(page, size, bytes, data);
}

long writeblock(int fd, uint32_t size, uint64_t blkoff, const void *data)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || data == NULL || !file_can_write(file))
        return -E_INVALID;
    if (size == 0 || size > READBLOCK_MAX_BLOCKS)
        return -E_INVALID;
    return file_write_at(file, data, (size_t)size * STORAGE_BLOCK_BYTES,
                         blkoff * STORAGE_BLOCK_BYTES);
}
