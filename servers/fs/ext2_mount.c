/* ext2_mount.c: mounting (superblock and group descriptor checks), block I/O
 * through the caller's device, and writing the superblock and descriptors
 * back. Every number read from disk is checked before it is used. */
#include "ext2_internal.h"

bool ext2_block_in_range(const struct ext2_fs *fs, uint32_t block)
{
    return block >= fs->superblock.s_first_data_block && block < fs->superblock.s_blocks_count;
}

int ext2_read_bytes(struct ext2_fs *fs, uint32_t block, uint32_t offset, void *buffer,
                    uint32_t length)
{
    if (block >= fs->superblock.s_blocks_count || offset > fs->block_size ||
        length > fs->block_size - offset)
        return -E_CORRUPT;
    if (__builtin_expect(fs->operation.held != 0, 0) &&
        ext2_operation_read(fs, block, offset, buffer, length))
        return 0;
    int status = fs->device->read_bytes(fs->device->context, block, offset, buffer, length);
    return status < 0 ? status : 0;
}

int ext2_read_data_bytes(struct ext2_fs *fs, uint32_t block, uint32_t offset, void *buffer,
                         uint32_t length)
{
    if (fs->device->read_data == NULL)
        return ext2_read_bytes(fs, block, offset, buffer, length);
    if (block >= fs->superblock.s_blocks_count || offset > fs->block_size ||
        length > fs->block_size - offset)
        return -E_CORRUPT;
    if (__builtin_expect(fs->operation.held != 0, 0) &&
        ext2_operation_read(fs, block, offset, buffer, length))
        return 0;
    int status = fs->device->read_data(fs->device->context, block, offset, buffer, length);
    return status < 0 ? status : 0;
}

int ext2_read_block(struct ext2_fs *fs, uint32_t block, void *buffer)
{
    return ext2_read_bytes(fs, block, 0, buffer, fs->block_size);
}

/* Metadata: held by the running operation until it ends (ext2_operation.c). */
int ext2_write_block(struct ext2_fs *fs, uint32_t block, const void *buffer)
{
    if (!ext2_block_in_range(fs, block))
        return -E_CORRUPT;
    return ext2_operation_write(fs, block, buffer);
}

/* A file's contents: written at once, not held by the operation (data is
 * not what an aborted operation must keep off the disk: the blocks it
 * allocated are free again); the device may write it in place rather than
 * log it. */
int ext2_write_data_block(struct ext2_fs *fs, uint32_t block, const void *buffer)
{
    if (!ext2_block_in_range(fs, block))
        return -E_CORRUPT;
    ext2_operation_data_written(fs, block);
    const struct ext2_device *device = fs->device;
    int status = device->write_data != NULL ? device->write_data(device->context, block, buffer)
                                            : device->write_block(device->context, block, buffer);
    return status < 0 ? status : 0;
}

int ext2_check_writable(const struct ext2_fs *fs)
{
    return fs->read_only ? -E_READ_ONLY : 0;
}

/* The superblock lives at byte 1024: block 1 with 1 KiB blocks, else inside block 0. */
int ext2_flush_superblock(struct ext2_fs *fs)
{
    if (!fs->superblock_dirty)
        return 0;
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    uint32_t block = fs->block_size == 1024 ? 1 : 0;
    uint32_t offset = fs->block_size == 1024 ? 0 : EXT2_SUPERBLOCK_OFFSET;
    int status = ext2_read_block(fs, block, buffer);
    if (status < 0)
        return status;
    memcpy(buffer + offset, &fs->superblock, sizeof fs->superblock);
    status = ext2_operation_write(fs, block, buffer);
    if (status < 0)
        return status;
    fs->superblock_dirty = false;
    return 0;
}

uint32_t ext2_group_first_block(const struct ext2_fs *fs, uint32_t group)
{
    return fs->superblock.s_first_data_block + group * fs->superblock.s_blocks_per_group;
}

uint32_t ext2_group_block_count(const struct ext2_fs *fs, uint32_t group)
{
    uint32_t first = ext2_group_first_block(fs, group);
    uint32_t left = fs->superblock.s_blocks_count - first;
    return left < fs->superblock.s_blocks_per_group ? left : fs->superblock.s_blocks_per_group;
}

static uint32_t descriptor_block(const struct ext2_fs *fs, uint32_t group)
{
    return fs->superblock.s_first_data_block + 1 + group / fs->descriptors_per_block;
}

static bool descriptor_is_valid(const struct ext2_fs *fs,
                                const struct ext2_group_descriptor *descriptor, uint32_t group)
{
    uint32_t table = descriptor->bg_inode_table;
    if (!ext2_block_in_range(fs, descriptor->bg_block_bitmap) ||
        !ext2_block_in_range(fs, descriptor->bg_inode_bitmap) || !ext2_block_in_range(fs, table))
        return false;
    if ((uint64_t)table + fs->inode_table_blocks > fs->superblock.s_blocks_count)
        return false;
    return descriptor->bg_free_blocks_count <= ext2_group_block_count(fs, group) &&
           descriptor->bg_free_inodes_count <= fs->superblock.s_inodes_per_group &&
           descriptor->bg_used_dirs_count <= fs->superblock.s_inodes_per_group;
}

/* Without uninit_bg (gdt_csum) or metadata_csum a group may not be marked
 * uninitialised (e2fsck: "marked uninitialized without feature set"). */
static bool uninit_marks_are_valid(const struct ext2_fs *fs,
                                   const struct ext2_group_descriptor *descriptor)
{
    uint32_t checksummed = EXT2_FEATURE_RO_COMPAT_GDT_CSUM | EXT2_FEATURE_RO_COMPAT_METADATA_CSUM;
    if (fs->superblock.s_feature_ro_compat & checksummed)
        return true;
    uint16_t unused;
    memcpy(&unused, (const uint8_t *)descriptor + EXT2_BG_ITABLE_UNUSED_OFFSET, sizeof unused);
    return (descriptor->bg_flags & (EXT2_BG_INODE_UNINIT | EXT2_BG_BLOCK_UNINIT)) == 0 &&
           unused == 0;
}

int ext2_read_group(struct ext2_fs *fs, uint32_t group, struct ext2_group_descriptor *descriptor)
{
    if (group >= fs->group_count)
        return -E_CORRUPT;
    uint32_t offset = (group % fs->descriptors_per_block) * sizeof *descriptor;
    int status =
        ext2_read_bytes(fs, descriptor_block(fs, group), offset, descriptor, sizeof *descriptor);
    if (status < 0)
        return status;
    if (!descriptor_is_valid(fs, descriptor, group))
        return ext2_corrupt(fs, 0, descriptor_block(fs, group),
                            "a group descriptor names blocks outside the file system or "
                            "counts more free blocks, inodes or directories than its group has");
    if (!uninit_marks_are_valid(fs, descriptor))
        return ext2_corrupt(fs, 0, descriptor_block(fs, group),
                            "a group descriptor is marked uninitialised without the feature");
    return 0;
}

int ext2_read_group_bitmap(struct ext2_fs *fs, uint32_t group, enum ext2_bitmap which,
                           struct ext2_group_descriptor *descriptor, uint8_t *bitmap)
{
    int status = ext2_read_group(fs, group, descriptor);
    if (status < 0)
        return status;
    uint32_t block =
        which == EXT2_INODE_BITMAP ? descriptor->bg_inode_bitmap : descriptor->bg_block_bitmap;
    return ext2_read_block(fs, block, bitmap);
}

int ext2_write_group(struct ext2_fs *fs, uint32_t group,
                     const struct ext2_group_descriptor *descriptor)
{
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    uint32_t block = descriptor_block(fs, group);
    int status = ext2_read_block(fs, block, buffer);
    if (status < 0)
        return status;
    memcpy(buffer + (group % fs->descriptors_per_block) * sizeof *descriptor, descriptor,
           sizeof *descriptor);
    return ext2_write_block(fs, block, buffer);
}

bool ext2_has_unknown_ro_features(const struct ext2_fs *fs)
{
    return (fs->superblock.s_feature_ro_compat & ~(uint32_t)EXT2_FEATURE_RO_COMPAT_SUPPORTED) != 0;
}

static int check_features(struct ext2_fs *fs)
{
    const struct ext2_superblock *sb = &fs->superblock;
    if (sb->s_rev_level == EXT2_GOOD_OLD_REV) {
        fs->inode_size = EXT2_GOOD_OLD_INODE_SIZE;
        fs->first_inode = EXT2_GOOD_OLD_FIRST_INODE;
        return 0;
    }
    if (sb->s_rev_level != EXT2_DYNAMIC_REV) {
        ext2_corrupt(fs, 0, 0, "unsupported superblock revision");
        return -E_INVALID;
    }
    if (sb->s_feature_incompat & ~(uint32_t)EXT2_FEATURE_INCOMPAT_SUPPORTED) {
        ext2_corrupt(fs, 0, 0, "unsupported incompatible features");
        return -E_INVALID;
    }
    fs->filetype = (sb->s_feature_incompat & EXT2_FEATURE_INCOMPAT_FILETYPE) != 0;
    fs->has_journal = (sb->s_feature_compat & EXT2_FEATURE_COMPAT_HAS_JOURNAL) != 0;
    fs->needs_recovery = (sb->s_feature_incompat & EXT2_FEATURE_INCOMPAT_RECOVER) != 0;
    if (fs->needs_recovery && !fs->has_journal)
        return ext2_corrupt(fs, 0, 0, "needs journal recovery but has no journal");
    fs->read_only = ext2_has_unknown_ro_features(fs) || fs->needs_recovery;
    if (fs->needs_recovery)
        fs->read_only_reason = "the journal needs recovery";
    if (ext2_has_unknown_ro_features(fs))
        fs->read_only_reason = "the superblock has read-only-compatible features FS does not "
                               "know";
    fs->inode_size = sb->s_inode_size;
    fs->first_inode = sb->s_first_ino;
    return 0;
}

static int check_geometry(struct ext2_fs *fs)
{
    const struct ext2_superblock *sb = &fs->superblock;
    uint32_t bits = fs->block_size * 8;
    if (sb->s_blocks_per_group == 0 || sb->s_blocks_per_group > bits ||
        sb->s_inodes_per_group == 0 || sb->s_inodes_per_group > bits)
        return ext2_corrupt(fs, 0, 0, "superblock: blocks or inodes per group out of range");
    if (sb->s_first_data_block != (fs->block_size == 1024 ? 1u : 0u) ||
        sb->s_blocks_count <= sb->s_first_data_block + 1)
        return ext2_corrupt(fs, 0, 0, "superblock: first data block or block count wrong");
    if (fs->inode_size < EXT2_GOOD_OLD_INODE_SIZE || fs->inode_size > fs->block_size ||
        (fs->inode_size & (fs->inode_size - 1)) != 0)
        return ext2_corrupt(fs, 0, 0, "superblock: inode size wrong");
    fs->group_count = (sb->s_blocks_count - sb->s_first_data_block + sb->s_blocks_per_group - 1) /
                      sb->s_blocks_per_group;
    if ((uint64_t)fs->group_count * sb->s_inodes_per_group != sb->s_inodes_count)
        return ext2_corrupt(fs, 0, 0, "superblock: inode count does not match the groups");
    if (fs->first_inode <= EXT2_ROOT_INODE || fs->first_inode > sb->s_inodes_count ||
        (sb->s_rev_level == EXT2_DYNAMIC_REV && fs->first_inode < EXT2_GOOD_OLD_FIRST_INODE))
        return ext2_corrupt(fs, 0, 0, "superblock: first inode out of range");
    if (sb->s_free_blocks_count > sb->s_blocks_count ||
        sb->s_free_inodes_count > sb->s_inodes_count || sb->s_r_blocks_count > sb->s_blocks_count)
        return ext2_corrupt(fs, 0, 0, "superblock: free or reserved counts over the totals");
    fs->descriptors_per_block = fs->block_size / sizeof(struct ext2_group_descriptor);
    fs->inodes_per_block = fs->block_size / fs->inode_size;
    fs->inode_table_blocks =
        (sb->s_inodes_per_group + fs->inodes_per_block - 1) / fs->inodes_per_block;
    fs->pointers_per_block = fs->block_size / 4;
    fs->max_file_blocks = ext2_largest_file_blocks(fs);
    fs->descriptor_blocks =
        (fs->group_count + fs->descriptors_per_block - 1) / fs->descriptors_per_block;
    uint32_t reserved =
        (sb->s_feature_compat & EXT2_FEATURE_COMPAT_RESIZE_INODE) ? sb->s_reserved_gdt_blocks : 0;
    if (reserved > fs->pointers_per_block ||
        (uint64_t)1 + fs->descriptor_blocks + reserved >= ext2_group_block_count(fs, 0))
        return ext2_corrupt(fs, 0, 0, "superblock: group descriptors do not fit in group 0");
    return 0;
}

/* The root must be a directory; its top-level blocks are kept, so that a
 * bitmap marking them free is caught before they are handed out. */
static int check_root(struct ext2_fs *fs)
{
    struct ext2_inode root;
    int status = ext2_read_inode(fs, EXT2_ROOT_INODE, &root);
    if (status < 0)
        return status;
    if (!ext2_is_directory(&root) || root.i_links_count < 2)
        return ext2_corrupt(fs, EXT2_ROOT_INODE, 0, "the root inode is not a directory");
    memcpy(fs->root_blocks, root.i_block, sizeof fs->root_blocks);
    return 0;
}

/* The file system must fit on the disk when its size is known (Linux:
 * "bad geometry: block count exceeds size of device"): a block past the
 * disk's end could be neither read nor written. */
static int check_disk_size(struct ext2_fs *fs)
{
    uint64_t disk = fs->device->size_bytes;
    if (disk != 0 && (uint64_t)fs->superblock.s_blocks_count * fs->block_size > disk)
        return ext2_corrupt(fs, 0, fs->superblock.s_blocks_count,
                            "superblock: the file system is larger than the disk");
    return 0;
}

int ext2_mount(struct ext2_fs *fs, struct ext2_device *device)
{
    memset(fs, 0, sizeof *fs);
    fs->report_problem = device->report_problem;
    fs->report_context = device->report_context;
    fs->device = device;
    device->block_size = 1024;
    if (device->size_bytes != 0 && device->size_bytes < 2 * EXT2_SUPERBLOCK_OFFSET)
        return ext2_corrupt(fs, 0, 1,
                            "the disk is too small to hold a superblock (bytes 1024 to 2047)");
    int status = device->read_bytes(device->context, 1, 0, &fs->superblock, sizeof fs->superblock);
    if (status < 0)
        return status;
    const struct ext2_superblock *sb = &fs->superblock;
    if (sb->s_magic != EXT2_MAGIC)
        return ext2_corrupt(fs, 0, 1, "superblock: no ext2 magic number");
    if (sb->s_log_block_size > 2) {
        ext2_corrupt(fs, 0, 1, "superblock: unsupported block size");
        return -E_INVALID;
    }
    fs->block_size = 1024u << sb->s_log_block_size;
    fs->errors_policy = ext2_errors_policy_of(sb);
    status = check_features(fs);
    if (status == 0)
        status = check_geometry(fs);
    if (status == 0)
        status = check_disk_size(fs);
    if (status < 0)
        return status;
    device->block_size = fs->block_size;
    status = ext2_check_group_locations(fs);
    if (status == 0)
        status = ext2_load_bad_blocks(fs);
    if (status == 0)
        status = check_root(fs);
    if (status < 0)
        return status;
    fs->mounted = true;
    return 0;
}
