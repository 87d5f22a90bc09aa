/* ext2_in_place.h: what FS needs, outside the ext2 library, to overwrite a
 * few bytes of a file where they lie (FS_WRITE without a data ICA): the disk
 * block holding them, and the inode's times stamped later. */
#pragma once
#include "ext2.h"

/* The file-system block holding bytes [offset, offset + length) of regular
 * file `inode`, when they lie in one block, inside the file, on a writable
 * file system, in a block that exists; *within <- their offset in it.
 * -E_NEEDS_DATA when the write must take the ordinary path (a hole, growth,
 * two blocks); other negative E_* codes as ext2_write would give. */
int ext2_in_place_target(struct ext2_fs *fs, uint32_t inode, uint64_t offset, uint32_t length,
                         uint32_t *block, uint32_t *within);
/* Sets the inode's modification and change times to fs->time and writes it. */
int ext2_in_place_touch(struct ext2_fs *fs, uint32_t inode);
