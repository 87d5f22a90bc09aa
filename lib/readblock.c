/* readblock.c: seed 003 Table 1's readblock, a system call in spirit: every
 * call is one FS_READBLOCK request (AP -> FS -> BLK -> AP, direct return),
 * nothing is kept in the process; and writeblock, its write counterpart.
 * A few blocks are asked for without a data ICA: BLK lends the cached blocks
 * themselves, so nothing is handed over; only when FS or BLK would have to
 * copy (holes, the file's end, an uncached block) is it asked again with one. */
#include "file_internal.h"
#include <formica/user.h>

/* One FS_READBLOCK request, with a data ICA for the blocks or without (then
 * only lent blocks can answer, else -E_NEEDS_DATA). */
static long ask_fs(const struct file_descriptor *file, uint32_t size, uint64_t blkoff, bool data)
{
    long error = file_channel_begin(FS_READBLOCK, data ? (uint64_t)size * STORAGE_BLOCK_BYTES : 0);
    if (error != 0)
        return error;
    *fs_readblock_of(file_channel_page()) =
        (struct fs_readblock_message){file->handle, blkoff, size};
    return file_channel_call(data);
}

/* ask_fs with a data ICA: the rarer case, apart. */
static __attribute__((noinline)) long ask_fs_with_data(const struct file_descriptor *file,
                                                       uint32_t size, uint64_t blkoff)
{
    return ask_fs(file, size, blkoff, true);
}

long readblock(int fd, uint32_t size, uint64_t blkoff, const void **data)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || data == NULL || !file_can_read(file))
        return -E_INVALID;
    if (size == 0 || size > READBLOCK_MAX_BLOCKS)
        return -E_INVALID;
    uint64_t wanted = (uint64_t)size * STORAGE_BLOCK_BYTES;
    long bytes = -E_NEEDS_DATA;
    if (size <= ICA_MAX_ATTACHED)
        bytes = file_channel_request3(FS_READBLOCK, file->handle, blkoff, size); /* lent */
    if (bytes == -E_NEEDS_DATA)
        bytes = ask_fs_with_data(file, size, blkoff);
    if (bytes < 0)
        return bytes;
    if ((uint64_t)bytes > wanted)
        bytes = (long)wanted;
    *data = bytes > 0 ? file_channel_result_data((uint64_t)bytes) : NULL;
    if (bytes > 0 && *data == NULL)
        return -E_INVALID; /* a result without data: a server bug */
    return bytes;
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
