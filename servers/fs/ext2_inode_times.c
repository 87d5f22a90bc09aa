/* ext2_inode_times.c: whether a change of an inode table block touched
 * nothing but its inodes' times. An FS replica then keeps the file-to-disk
 * block maps it remembers (docs/storage.md, "FS replicas"): a small write's
 * new modification time moves no block. */
#include "ext2_internal.h"
#include <stddef.h>

/* The time fields of the 128-byte core (i_atime, i_ctime, i_mtime: one
 * run) and of a large inode's extra part (the nanoseconds and i_crtime). */
#define CORE_TIMES_START offsetof(struct ext2_inode, i_atime)
#define CORE_TIMES_END offsetof(struct ext2_inode, i_dtime)
#define EXTRA_TIMES_START 132u /* i_ctime_extra */
#define EXTRA_TIMES_END 152u   /* past i_crtime_extra */

static bool same(const uint8_t *before, const uint8_t *after, uint32_t from, uint32_t to)
{
    return from >= to || memcmp(before + from, after + from, to - from) == 0;
}

/* One inode of `size` bytes alike but for its times. */
static bool inode_alike_but_times(const uint8_t *before, const uint8_t *after, uint32_t size)
{
    if (!same(before, after, 0, CORE_TIMES_START) ||
        !same(before, after, CORE_TIMES_END, size < EXTRA_TIMES_START ? size : EXTRA_TIMES_START))
        return false;
    return size <= EXTRA_TIMES_END || same(before, after, EXTRA_TIMES_END, size);
}

bool ext2_only_inode_times_changed(const struct ext2_fs *fs, uint32_t block, const void *before,
                                   const void *after)
{
    if (!ext2_is_inode_table_block(fs, block) || fs->inode_size < EXT2_GOOD_OLD_INODE_SIZE)
        return false;
    for (uint32_t at = 0; at + fs->inode_size <= fs->block_size; at += fs->inode_size)
        if (!inode_alike_but_times((const uint8_t *)before + at, (const uint8_t *)after + at,
                                   fs->inode_size))
            return false;
    return true;
}
