/* ext2_public_map.h: the pieces of the ext2 block map FS needs outside the
 * library: where a file's logical blocks lie on the disk (readblock), and
 * the largest file size (FS's range checks). */
#pragma once
#include "ext2.h"

/* For logical blocks first .. first + count - 1 of a regular file `inode`:
 * disk_blocks[i] <- the file-system block holding it (0 for a hole), and
 * *size <- the file's size. One inode read. 0 or a negative E_* code
 * (-E_IS_DIRECTORY / -E_INVALID for what is not a regular file). */
int ext2_file_blocks(struct ext2_fs *fs, uint32_t inode, uint64_t first, uint32_t count,
                     uint32_t *disk_blocks, uint64_t *size);

/* The largest size a file may have on this file system (the block tree's
 * reach, capped by the 32-bit i_blocks, computed at mount): offsets at or
 * past it are refused. */
static inline uint64_t ext2_max_file_bytes(const struct ext2_fs *fs)
{
    return fs->max_file_blocks * fs->block_size;
}
