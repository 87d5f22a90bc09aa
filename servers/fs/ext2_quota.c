/* ext2_quota.c: the ext2 library's side of disk quotas: growth of an inode
 * is asked of the caller's quota for the inode's owner (and the reserved
 * blocks are root's), each change of i_blocks is reported, and the holdings
 * of every uid are summed from the inode table at mount. */
#include "ext2_internal.h"

int ext2_quota_allows(struct ext2_fs *fs, const struct ext2_inode *inode, uint32_t blocks)
{
    const struct ext2_superblock *superblock = &fs->superblock;
    if (fs->user.uid != EXT2_ROOT_USER &&
        (uint64_t)superblock->s_free_blocks_count < (uint64_t)blocks + superblock->s_r_blocks_count)
        return -E_NO_SPACE; /* what is left is reserved for root */
    if (fs->quota.may_grow == NULL)
        return 0;
    return fs->quota.may_grow(fs->quota.context, ext2_inode_uid(inode),
                              (uint64_t)blocks * (fs->block_size / 512));
}

void ext2_quota_charge(struct ext2_fs *fs, const struct ext2_inode *inode, int64_t sectors)
{
    if (fs->quota.changed == NULL || sectors == 0)
        return;
    fs->quota.changed(fs->quota.context, ext2_inode_uid(inode), sectors);
    ext2_operation_charge(fs, ext2_inode_uid(inode), sectors); /* given back if it fails */
}

static bool bit_is_set(const uint8_t *bitmap, uint32_t bit)
{
    return (bitmap[bit / 8] >> (bit % 8)) & 1;
}

/* The reserved inodes but root (the journal's, the resize inode...) are the
 * file system's own: root's, which no quota limits, and not files whose
 * pointers the checked read would accept. */
static bool is_reserved_inode(const struct ext2_fs *fs, uint32_t number)
{
    return number < fs->first_inode && number != EXT2_ROOT_INODE;
}

/* The allocated inodes of one group: each one's owner and i_blocks. */
static int sum_group(struct ext2_fs *fs, uint32_t group,
                     void (*visit)(void *context, uint32_t uid, uint64_t sectors), void *context)
{
    struct ext2_group_descriptor descriptor;
    uint8_t bitmap[EXT2_MAX_BLOCK_SIZE];
    uint32_t per_group = fs->superblock.s_inodes_per_group;
    int status = ext2_read_group(fs, group, &descriptor);
    if (status < 0 || descriptor.bg_free_inodes_count >= per_group)
        return status; /* an error, or no inode in use here */
    status = ext2_read_block(fs, descriptor.bg_inode_bitmap, bitmap);
    for (uint32_t bit = 0; status == 0 && bit < per_group && bit / 8 < fs->block_size; bit++) {
        uint32_t number = group * per_group + bit + 1;
        if (!bit_is_set(bitmap, bit) || is_reserved_inode(fs, number))
            continue;
        struct ext2_inode inode;
        status = ext2_read_inode(fs, number, &inode);
        if (status == 0 && inode.i_blocks != 0)
            visit(context, ext2_inode_uid(&inode), inode.i_blocks);
    }
    return status;
}

int ext2_quota_sum(struct ext2_fs *fs, void (*visit)(void *context, uint32_t uid, uint64_t sectors),
                   void *context)
{
    for (uint32_t group = 0; group < fs->group_count; group++) {
        int status = sum_group(fs, group, visit, context);
        if (status < 0)
            return status;
    }
    return 0;
}
