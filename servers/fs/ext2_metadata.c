/* ext2_metadata.c: where the file system's own blocks are (superblock and
 * descriptor copies, bitmaps, inode tables, the journal, root's blocks, the
 * bad-block list), the mount-time check that the descriptors name sane,
 * separate places, and the checks that a bitmap marks all of them in use
 * before FS allocates. */
#include "ext2_internal.h"

static bool is_power_of(uint32_t number, uint32_t base)
{
    while (number > 1 && number % base == 0)
        number /= base;
    return number == 1;
}

/* sparse_super: copies in groups 0, 1 and the powers of 3, 5 and 7. */
static bool group_has_super(const struct ext2_fs *fs, uint32_t group)
{
    if (group <= 1 || !(fs->superblock.s_feature_ro_compat & EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER))
        return true;
    return is_power_of(group, 3) || is_power_of(group, 5) || is_power_of(group, 7);
}

uint32_t ext2_group_super_blocks(const struct ext2_fs *fs, uint32_t group, uint32_t *first)
{
    *first = ext2_group_first_block(fs, group);
    if (!group_has_super(fs, group))
        return 0;
    uint32_t reserved = (fs->superblock.s_feature_compat & EXT2_FEATURE_COMPAT_RESIZE_INODE)
                            ? fs->superblock.s_reserved_gdt_blocks
                            : 0;
    return 1 + fs->descriptor_blocks + reserved;
}

static bool within(uint32_t block, uint32_t first, uint32_t count)
{
    return block >= first && block - first < count;
}

/* The group's bitmaps and inode table, as checked at mount. */
static int group_location(struct ext2_fs *fs, uint32_t group, struct ext2_group_location *location)
{
    if (group < EXT2_KNOWN_GROUPS) {
        *location = fs->groups[group];
        return 0;
    }
    struct ext2_group_descriptor descriptor;
    int status = ext2_read_group(fs, group, &descriptor);
    if (status < 0)
        return status;
    *location = (struct ext2_group_location){descriptor.bg_block_bitmap, descriptor.bg_inode_bitmap,
                                             descriptor.bg_inode_table};
    return 0;
}

static bool is_protected(const struct ext2_fs *fs, uint32_t block)
{
    for (uint32_t i = 0; i < fs->protected_count; i++)
        if (within(block, fs->protected_ranges[i].first, fs->protected_ranges[i].count))
            return true;
    return false;
}

bool ext2_is_metadata(const struct ext2_fs *fs, uint32_t block)
{
    if (!ext2_block_in_range(fs, block))
        return false; /* not a block at all: the range checks refuse it */
    uint32_t group =
        (block - fs->superblock.s_first_data_block) / fs->superblock.s_blocks_per_group;
    uint32_t first;
    uint32_t count = ext2_group_super_blocks(fs, group, &first);
    if (within(block, first, count) || is_protected(fs, block))
        return true;
    struct ext2_group_location location;
    if (group_location((struct ext2_fs *)fs, group, &location) < 0)
        return true; /* unreadable descriptor: take no chance */
    return block == location.block_bitmap || block == location.inode_bitmap ||
           within(block, location.inode_table, fs->inode_table_blocks);
}

int ext2_group_inode_table(struct ext2_fs *fs, uint32_t group, uint32_t *table)
{
    struct ext2_group_location location;
    int status = group_location(fs, group, &location);
    if (status == 0)
        *table = location.inode_table;
    return status;
}

bool ext2_is_inode_table_block(const struct ext2_fs *fs, uint32_t block)
{
    if (!ext2_block_in_range(fs, block))
        return false;
    uint32_t group =
        (block - fs->superblock.s_first_data_block) / fs->superblock.s_blocks_per_group;
    struct ext2_group_location location;
    if (group_location((struct ext2_fs *)fs, group, &location) < 0)
        return false;
    return within(block, location.inode_table, fs->inode_table_blocks);
}

/* One group's descriptor: everything inside the group, nothing overlapping. */
static int check_one_location(struct ext2_fs *fs, uint32_t group,
                              const struct ext2_group_descriptor *descriptor)
{
    uint32_t group_first = ext2_group_first_block(fs, group);
    uint32_t group_count = ext2_group_block_count(fs, group);
    uint32_t super_first, super_count = ext2_group_super_blocks(fs, group, &super_first);
    uint32_t bitmap = descriptor->bg_block_bitmap, inodes = descriptor->bg_inode_bitmap;
    uint32_t table = descriptor->bg_inode_table, table_count = fs->inode_table_blocks;
    if (!within(bitmap, group_first, group_count) || !within(inodes, group_first, group_count) ||
        !within(table, group_first, group_count) ||
        (uint64_t)table + table_count > (uint64_t)group_first + group_count)
        return ext2_corrupt(fs, 0, table, "a group's bitmaps or inode table lie outside it");
    if (within(bitmap, super_first, super_count) || within(inodes, super_first, super_count) ||
        within(super_first, table, table_count) || within(table, super_first, super_count))
        return ext2_corrupt(fs, 0, bitmap,
                            "a group's bitmaps or inode table overlap the superblock or "
                            "group descriptors");
    if (bitmap == inodes || within(bitmap, table, table_count) ||
        within(inodes, table, table_count))
        return ext2_corrupt(fs, 0, inodes,
                            "a group's block bitmap, inode bitmap and inode table overlap");
    if (group < EXT2_KNOWN_GROUPS)
        fs->groups[group] = (struct ext2_group_location){bitmap, inodes, table};
    return 0;
}

int ext2_check_group_locations(struct ext2_fs *fs)
{
    struct ext2_group_descriptor descriptor;
    for (uint32_t group = 0; group < fs->group_count; group++) {
        int status = ext2_read_group(fs, group, &descriptor);
        if (status == 0)
            status = check_one_location(fs, group, &descriptor);
        if (status < 0)
            return status;
    }
    return 0;
}

static bool bit_is_set(const uint8_t *bitmap, uint32_t bit)
{
    return (bitmap[bit / 8] >> (bit % 8)) & 1;
}

/* Every block of [first, first + count) inside the group is marked in use. */
static bool all_marked(const struct ext2_fs *fs, uint32_t group, const uint8_t *bitmap,
                       uint32_t first, uint32_t count, uint32_t *unmarked)
{
    uint64_t group_first = ext2_group_first_block(fs, group);
    uint64_t group_end = group_first + ext2_group_block_count(fs, group);
    uint64_t from = first > group_first ? first : group_first;
    uint64_t to = (uint64_t)first + count < group_end ? (uint64_t)first + count : group_end;
    for (uint64_t block = from; block < to; block++) {
        if (!bit_is_set(bitmap, (uint32_t)(block - group_first))) {
            *unmarked = (uint32_t)block;
            return false;
        }
    }
    return true;
}

static bool protected_marked(const struct ext2_fs *fs, uint32_t group, const uint8_t *bitmap,
                             uint32_t *unmarked)
{
    for (uint32_t i = 0; i < fs->protected_count; i++)
        if (!all_marked(fs, group, bitmap, fs->protected_ranges[i].first,
                        fs->protected_ranges[i].count, unmarked))
            return false;
    return true;
}

static bool bad_blocks_marked(const struct ext2_fs *fs, uint32_t group, const uint8_t *bitmap,
                              uint32_t *unmarked)
{
    for (uint32_t i = 0; i < fs->bad_block_ranges; i++)
        if (!all_marked(fs, group, bitmap, fs->bad_blocks[i].first, fs->bad_blocks[i].count,
                        unmarked))
            return false;
    return true;
}

static bool root_marked(const struct ext2_fs *fs, uint32_t group, const uint8_t *bitmap,
                        uint32_t *unmarked)
{
    for (uint32_t i = 0; i < EXT2_BLOCK_POINTERS; i++)
        if (fs->root_blocks[i] != 0 &&
            !all_marked(fs, group, bitmap, fs->root_blocks[i], 1, unmarked))
            return false;
    return true;
}

int ext2_verify_block_bitmap(struct ext2_fs *fs, uint32_t group, const uint8_t *bitmap)
{
    if (group < EXT2_KNOWN_GROUPS && (fs->verified_bitmaps[group] & 1))
        return 0;
    struct ext2_group_location location;
    int status = group_location(fs, group, &location);
    if (status < 0)
        return status;
    uint32_t super_first, super_count = ext2_group_super_blocks(fs, group, &super_first);
    uint32_t unmarked = 0;
    if (!all_marked(fs, group, bitmap, super_first, super_count, &unmarked) ||
        !all_marked(fs, group, bitmap, location.block_bitmap, 1, &unmarked) ||
        !all_marked(fs, group, bitmap, location.inode_bitmap, 1, &unmarked) ||
        !all_marked(fs, group, bitmap, location.inode_table, fs->inode_table_blocks, &unmarked) ||
        !protected_marked(fs, group, bitmap, &unmarked))
        return ext2_corrupt(fs, 0, unmarked, "the block bitmap marks a metadata block free");
    if (!root_marked(fs, group, bitmap, &unmarked))
        return ext2_corrupt(fs, EXT2_ROOT_INODE, unmarked,
                            "the block bitmap marks a block of the root directory free");
    if (!bad_blocks_marked(fs, group, bitmap, &unmarked))
        return ext2_corrupt(fs, EXT2_BAD_BLOCKS_INODE, unmarked,
                            "the block bitmap marks a block of the bad-block list free");
    if (group < EXT2_KNOWN_GROUPS)
        fs->verified_bitmaps[group] |= 1;
    return 0;
}

/* The first inode of the group's table that lies in a bad block and is
 * marked free (e2fsck counts those inodes in use), or 0. */
static uint32_t free_inode_in_bad_block(const struct ext2_fs *fs, uint32_t group,
                                        const struct ext2_group_location *location,
                                        const uint8_t *bitmap)
{
    uint32_t per_group = fs->superblock.s_inodes_per_group;
    for (uint32_t i = 0; i < fs->bad_block_ranges; i++) {
        const struct ext2_block_range *bad = &fs->bad_blocks[i];
        for (uint32_t block = bad->first; block - bad->first < bad->count; block++) {
            if (!within(block, location->inode_table, fs->inode_table_blocks))
                continue;
            uint32_t first = (block - location->inode_table) * fs->inodes_per_block;
            for (uint32_t index = first; index < first + fs->inodes_per_block; index++)
                if (index < per_group && !bit_is_set(bitmap, index))
                    return group * per_group + index + 1;
        }
    }
    return 0;
}

int ext2_verify_inode_bitmap(struct ext2_fs *fs, uint32_t group, const uint8_t *bitmap)
{
    if (group < EXT2_KNOWN_GROUPS && (fs->verified_bitmaps[group] & 2))
        return 0;
    uint32_t base = group * fs->superblock.s_inodes_per_group;
    for (uint32_t inode = base + 1; inode < fs->first_inode; inode++) {
        if (inode - base > fs->superblock.s_inodes_per_group)
            break;
        if (!bit_is_set(bitmap, inode - base - 1))
            return ext2_corrupt(fs, inode, 0, "the inode bitmap marks a reserved inode free");
    }
    struct ext2_group_location location;
    int status = group_location(fs, group, &location);
    if (status < 0)
        return status;
    uint32_t in_bad_block = free_inode_in_bad_block(fs, group, &location, bitmap);
    if (in_bad_block != 0)
        return ext2_corrupt(fs, in_bad_block, 0,
                            "the inode bitmap marks free an inode that lies in a bad block");
    if (group < EXT2_KNOWN_GROUPS)
        fs->verified_bitmaps[group] |= 2;
    return 0;
}
