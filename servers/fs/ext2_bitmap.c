/* ext2_bitmap.c: block and inode allocation through the group bitmaps. Each
 * change updates the bitmap, the group descriptor and the superblock's free
 * counts together, so e2fsck finds them consistent. */
#include "ext2_internal.h"

static bool bit_is_set(const uint8_t *bitmap, uint32_t bit)
{
    return (bitmap[bit / 8] >> (bit % 8)) & 1;
}

static void set_bit(uint8_t *bitmap, uint32_t bit)
{
    bitmap[bit / 8] |= (uint8_t)(1u << (bit % 8));
}

static void clear_bit(uint8_t *bitmap, uint32_t bit)
{
    bitmap[bit / 8] &= (uint8_t) ~(1u << (bit % 8));
}

/* The first clear bit in [from, limit), or UINT32_MAX. */
static uint32_t find_clear_bit(const uint8_t *bitmap, uint32_t from, uint32_t limit)
{
    for (uint32_t bit = from; bit < limit; bit++) {
        if ((bit % 8) == 0 && bit + 8 <= limit && bitmap[bit / 8] == 0xFF) {
            bit += 7;
            continue;
        }
        if (!bit_is_set(bitmap, bit))
            return bit;
    }
    return UINT32_MAX;
}

/* A free block is not reused by the operation that freed it, nor while the
 * device says it must wait (a journal: freed by an uncommitted transaction). */
static bool may_allocate(const struct ext2_fs *fs, uint32_t group, uint32_t bit)
{
    const struct ext2_device *device = fs->device;
    uint32_t block = ext2_group_first_block(fs, group) + bit;
    if (ext2_operation_freed(fs, block))
        return false;
    return device->may_allocate == NULL || device->may_allocate(device->context, block);
}

/* The first clear bit in [from, count) the device lets us reuse, or UINT32_MAX. */
static uint32_t find_allocatable(const struct ext2_fs *fs, const uint8_t *bitmap, uint32_t group,
                                 uint32_t from, uint32_t count)
{
    for (uint32_t bit = find_clear_bit(bitmap, from, count); bit != UINT32_MAX;
         bit = find_clear_bit(bitmap, bit + 1, count))
        if (may_allocate(fs, group, bit))
            return bit;
    return UINT32_MAX;
}

static int take_block_in_group(struct ext2_fs *fs, uint32_t group, uint32_t from, uint32_t *block)
{
    struct ext2_group_descriptor descriptor;
    uint8_t bitmap[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_group(fs, group, &descriptor);
    if (status < 0 || descriptor.bg_free_blocks_count == 0)
        return status < 0 ? status : -E_NO_SPACE;
    status = ext2_read_block(fs, descriptor.bg_block_bitmap, bitmap);
    if (status == 0)
        status = ext2_verify_block_bitmap(fs, group, bitmap);
    if (status < 0)
        return status;
    uint32_t count = ext2_group_block_count(fs, group);
    uint32_t bit = find_allocatable(fs, bitmap, group, from < count ? from : 0, count);
    if (bit == UINT32_MAX && from != 0)
        bit = find_allocatable(fs, bitmap, group, 0, count);
    if (bit == UINT32_MAX)
        return -E_NO_SPACE;
    uint32_t found = ext2_group_first_block(fs, group) + bit;
    if (ext2_is_metadata(fs, found))
        return ext2_corrupt(fs, 0, found, "the block bitmap marks a metadata block free");
    if (ext2_is_bad_block(fs, found))
        return ext2_corrupt(fs, EXT2_BAD_BLOCKS_INODE, found,
                            "the block bitmap marks a block of the bad-block list free");
    if (ext2_claimed(fs, found))
        return ext2_corrupt(fs, 0, found, "the block bitmap marks free a block a file claims");
    set_bit(bitmap, bit);
    status = ext2_write_block(fs, descriptor.bg_block_bitmap, bitmap);
    if (status < 0)
        return status;
    descriptor.bg_free_blocks_count--;
    status = ext2_write_group(fs, group, &descriptor);
    if (status < 0)
        return status;
    if (fs->superblock.s_free_blocks_count > 0)
        fs->superblock.s_free_blocks_count--;
    fs->superblock_dirty = true;
    ext2_operation_allocated(fs, found); /* a file claims it once the operation ends */
    *block = found;
    return 0;
}

int ext2_allocate_block(struct ext2_fs *fs, uint32_t goal, uint32_t *block)
{
    uint32_t first = fs->superblock.s_first_data_block;
    if (!ext2_block_in_range(fs, goal))
        goal = first;
    uint32_t start_group = (goal - first) / fs->superblock.s_blocks_per_group;
    uint32_t start_bit = (goal - first) % fs->superblock.s_blocks_per_group;
    for (uint32_t step = 0; step < fs->group_count; step++) {
        uint32_t group = (start_group + step) % fs->group_count;
        int status = take_block_in_group(fs, group, step == 0 ? start_bit : 0, block);
        if (status != -E_NO_SPACE)
            return status;
    }
    return -E_NO_SPACE;
}

int ext2_free_block(struct ext2_fs *fs, uint32_t block)
{
    if (!ext2_block_in_range(fs, block))
        return -E_CORRUPT;
    uint32_t group =
        (block - fs->superblock.s_first_data_block) / fs->superblock.s_blocks_per_group;
    uint32_t bit = (block - fs->superblock.s_first_data_block) % fs->superblock.s_blocks_per_group;
    struct ext2_group_descriptor descriptor;
    uint8_t bitmap[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_group_bitmap(fs, group, EXT2_BLOCK_BITMAP, &descriptor, bitmap);
    if (status < 0)
        return status;
    if (ext2_is_metadata(fs, block))
        return ext2_corrupt(fs, 0, block, "freeing a metadata block");
    if (ext2_is_bad_block(fs, block))
        return ext2_corrupt(fs, EXT2_BAD_BLOCKS_INODE, block,
                            "freeing a block of the bad-block list");
    if (ext2_claimed_twice(fs, block))
        return ext2_corrupt(fs, 0, block, "freeing a block another file also claims");
    if (!bit_is_set(bitmap, bit))
        return ext2_corrupt(fs, 0, block, "freeing a block the bitmap marks free");
    clear_bit(bitmap, bit);
    status = ext2_write_block(fs, descriptor.bg_block_bitmap, bitmap);
    if (status < 0)
        return status;
    descriptor.bg_free_blocks_count++;
    status = ext2_write_group(fs, group, &descriptor);
    if (status < 0)
        return status;
    fs->superblock.s_free_blocks_count++;
    fs->superblock_dirty = true;
    ext2_operation_forget(fs, block); /* told to the device when the operation ends */
    return 0;
}

/* Directories go to the group with the most free inodes, files near their parent. */
static uint32_t inode_start_group(struct ext2_fs *fs, uint32_t parent, bool directory)
{
    uint32_t parent_group = (parent - 1) / fs->superblock.s_inodes_per_group;
    if (!directory)
        return parent_group % fs->group_count;
    uint32_t best = parent_group % fs->group_count;
    uint32_t best_free = 0;
    struct ext2_group_descriptor descriptor;
    for (uint32_t group = 0; group < fs->group_count; group++) {
        if (ext2_read_group(fs, group, &descriptor) == 0 &&
            descriptor.bg_free_inodes_count > best_free) {
            best = group;
            best_free = descriptor.bg_free_inodes_count;
        }
    }
    return best;
}

/* The cheap double-check of a free bit: the inode itself must be unused
 * (never used, mode 0, or deleted: dtime set and no links). */
static int check_inode_is_free(struct ext2_fs *fs, uint32_t number)
{
    if (ext2_inode_in_bad_block(fs, number))
        return ext2_corrupt(fs, number, 0,
                            "the inode bitmap marks free an inode that lies in a bad block");
    struct ext2_inode inode;
    int status = ext2_read_raw_inode(fs, number, &inode);
    if (status < 0)
        return status;
    if (inode.i_mode != 0 && (inode.i_links_count != 0 || inode.i_dtime == 0))
        return ext2_corrupt(fs, number, 0, "the inode bitmap marks a live inode free");
    return 0;
}

static int take_inode_in_group(struct ext2_fs *fs, uint32_t group, bool directory, uint32_t *inode)
{
    struct ext2_group_descriptor descriptor;
    uint8_t bitmap[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_group(fs, group, &descriptor);
    if (status < 0 || descriptor.bg_free_inodes_count == 0)
        return status < 0 ? status : -E_NO_SPACE;
    status = ext2_read_block(fs, descriptor.bg_inode_bitmap, bitmap);
    if (status == 0)
        status = ext2_verify_inode_bitmap(fs, group, bitmap);
    if (status < 0)
        return status;
    uint32_t base = group * fs->superblock.s_inodes_per_group;
    uint32_t from = fs->first_inode > base + 1 ? fs->first_inode - base - 1 : 0;
    uint32_t bit = find_clear_bit(bitmap, from, fs->superblock.s_inodes_per_group);
    if (bit == UINT32_MAX)
        return -E_NO_SPACE;
    status = check_inode_is_free(fs, base + bit + 1);
    if (status < 0)
        return status;
    set_bit(bitmap, bit);
    status = ext2_write_block(fs, descriptor.bg_inode_bitmap, bitmap);
    if (status < 0)
        return status;
    descriptor.bg_free_inodes_count--;
    if (directory)
        descriptor.bg_used_dirs_count++;
    status = ext2_write_group(fs, group, &descriptor);
    if (status < 0)
        return status;
    if (fs->superblock.s_free_inodes_count > 0)
        fs->superblock.s_free_inodes_count--;
    fs->superblock_dirty = true;
    *inode = base + bit + 1;
    return 0;
}

int ext2_allocate_inode(struct ext2_fs *fs, uint32_t parent, bool directory, uint32_t *inode)
{
    uint32_t start = inode_start_group(fs, parent, directory);
    for (uint32_t step = 0; step < fs->group_count; step++) {
        int status = take_inode_in_group(fs, (start + step) % fs->group_count, directory, inode);
        if (status != -E_NO_SPACE)
            return status;
    }
    return -E_NO_SPACE;
}

int ext2_free_inode(struct ext2_fs *fs, uint32_t inode, bool directory)
{
    if (inode == 0 || inode > fs->superblock.s_inodes_count)
        return -E_CORRUPT;
    uint32_t group = (inode - 1) / fs->superblock.s_inodes_per_group;
    uint32_t bit = (inode - 1) % fs->superblock.s_inodes_per_group;
    struct ext2_group_descriptor descriptor;
    uint8_t bitmap[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_group_bitmap(fs, group, EXT2_INODE_BITMAP, &descriptor, bitmap);
    if (status < 0)
        return status;
    if (!bit_is_set(bitmap, bit))
        return ext2_corrupt(fs, inode, 0, "freeing an inode the bitmap marks free");
    clear_bit(bitmap, bit);
    status = ext2_write_block(fs, descriptor.bg_inode_bitmap, bitmap);
    if (status < 0)
        return status;
    descriptor.bg_free_inodes_count++;
    if (directory && descriptor.bg_used_dirs_count > 0)
        descriptor.bg_used_dirs_count--;
    status = ext2_write_group(fs, group, &descriptor);
    if (status < 0)
        return status;
    fs->superblock.s_free_inodes_count++;
    fs->superblock_dirty = true;
    return 0;
}
