/* ext2_bad_blocks.c: the bad-block list of inode 1 (what `e2fsck -c` or
 * `mke2fs -l` recorded): read at mount into fs->bad_blocks, so that no
 * block on it is handed out or named by a file, and no inode living in an
 * inode-table block on it is used. A list FS cannot read whole mounts the
 * file system read-only: it cannot tell which blocks to avoid. */
#include "ext2_internal.h"

static bool within(uint32_t block, uint32_t first, uint32_t count)
{
    return block >= first && block - first < count;
}

/* A block of inode 1's tree: its leaves are the bad blocks, its indirect
 * blocks hold the list; both stay out of every file and allocation. */
static int note_bad_block(void *context, uint32_t block, bool indirect, uint64_t logical)
{
    (void)indirect, (void)logical;
    struct ext2_fs *fs = context;
    uint32_t count = fs->bad_block_ranges;
    struct ext2_block_range *last = count > 0 ? &fs->bad_blocks[count - 1] : NULL;
    if (ext2_bad_block_listed(fs, block))
        return 0; /* listed twice: e2fsck keeps one */
    ext2_forget_checked_inodes(fs);
    if (last != NULL && last->first + last->count == block) {
        last->count++;
        return 0;
    }
    if (count == EXT2_BAD_BLOCK_RANGES)
        return -E_TOO_BIG;
    fs->bad_blocks[fs->bad_block_ranges++] = (struct ext2_block_range){block, 1};
    return 0;
}

static void mount_read_only(struct ext2_fs *fs, const char *reason)
{
    fs->bad_block_ranges = 0;
    ext2_forget_checked_inodes(fs);
    fs->bad_blocks_unknown = true;
    fs->read_only = true;
    fs->read_only_reason = reason;
}

int ext2_load_bad_blocks(struct ext2_fs *fs)
{
    struct ext2_inode list;
    int status = ext2_read_raw_inode(fs, EXT2_BAD_BLOCKS_INODE, &list);
    if (status < 0)
        return status;
    fs->bad_block_ranges = 0;
    ext2_forget_checked_inodes(fs);
    status = ext2_visit_bad_block_list(fs, &list, note_bad_block, fs);
    if (status == -E_TOO_BIG) {
        ext2_corrupt(fs, EXT2_BAD_BLOCKS_INODE, 0,
                     "the bad-block list (inode 1) is longer than FS can keep");
        mount_read_only(fs, "the bad-block list (inode 1) is longer than FS can keep: it cannot "
                            "tell which blocks to avoid");
    } else if (status == -E_CORRUPT) {
        mount_read_only(fs, "the bad-block list (inode 1) is corrupt: FS cannot tell which "
                            "blocks to avoid");
    } else if (status < 0) {
        return status;
    }
    return 0;
}

bool ext2_bad_block_listed(const struct ext2_fs *fs, uint32_t block)
{
    for (uint32_t i = 0; i < fs->bad_block_ranges; i++)
        if (within(block, fs->bad_blocks[i].first, fs->bad_blocks[i].count))
            return true;
    return false;
}

bool ext2_inode_in_bad_block(struct ext2_fs *fs, uint32_t number)
{
    if (fs->bad_block_ranges == 0 || number == 0 || number > fs->superblock.s_inodes_count)
        return false;
    uint32_t group = (number - 1) / fs->superblock.s_inodes_per_group;
    uint32_t index = (number - 1) % fs->superblock.s_inodes_per_group;
    uint32_t table;
    if (ext2_group_inode_table(fs, group, &table) < 0)
        return true; /* unreadable descriptor: take no chance */
    return ext2_bad_block_listed(fs, table + index / fs->inodes_per_block);
}
