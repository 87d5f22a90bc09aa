/* ext2_in_place.h: what FS needs, outside the ext2 library, to overwrite a
 * few bytes of a file where they lie (FS_WRITE without a data ICA; the disk
 * block holding them comes from FS's block map cache): the inode's times,
 * stamped later. */
#pragma once
#include "ext2.h"

/* Sets the inode's modification and change times to fs->time and writes it. */
int ext2_in_place_touch(struct ext2_fs *fs, uint32_t inode);
