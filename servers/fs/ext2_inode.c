/* ext2_inode.c: reading and writing inodes in the inode tables, their size
 * and type, setting up a fresh inode and releasing one whose last link is
 * gone (its blocks, then its bitmap bit), now or, for a file kept open after
 * its unlink, at its last close. */
#include "ext2_internal.h"

int ext2_locate_inode(struct ext2_fs *fs, uint32_t number, uint32_t *block, uint32_t *offset)
{
    if (number == 0 || number > fs->superblock.s_inodes_count)
        return -E_CORRUPT;
    uint32_t group = (number - 1) / fs->superblock.s_inodes_per_group;
    uint32_t index = (number - 1) % fs->superblock.s_inodes_per_group;
    struct ext2_group_descriptor descriptor;
    int status = ext2_read_group(fs, group, &descriptor);
    if (status < 0)
        return status;
    *block = descriptor.bg_inode_table + index / fs->inodes_per_block;
    *offset = (index % fs->inodes_per_block) * fs->inode_size;
    return 0;
}

/* The block holding inode `number`, read into `buffer`; where it is. */
static int read_inode_block(struct ext2_fs *fs, uint32_t number, uint8_t *buffer, uint32_t *block,
                            uint32_t *offset)
{
    int status = ext2_locate_inode(fs, number, block, offset);
    return status == 0 ? ext2_read_block(fs, *block, buffer) : status;
}

/* How many bytes of struct ext2_inode the on-disk slot holds. */
static size_t core_length(const struct ext2_fs *fs)
{
    return fs->inode_size < sizeof(struct ext2_inode) ? fs->inode_size : sizeof(struct ext2_inode);
}

/* The inode as it is on disk, unchecked (the allocator looks at free ones). */
int ext2_read_raw_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode)
{
    uint32_t block, offset;
    int status = ext2_locate_inode(fs, number, &block, &offset);
    memset(inode, 0, sizeof *inode);
    if (status == 0)
        status = ext2_read_bytes(fs, block, offset, inode, (uint32_t)core_length(fs));
    return status;
}

static bool is_known_type(uint16_t mode)
{
    switch (mode & EXT2_S_IFMT) {
    case EXT2_S_IFREG:
    case EXT2_S_IFDIR:
    case EXT2_S_IFLNK:
    case EXT2_S_IFCHR:
    case EXT2_S_IFBLK:
    case EXT2_S_IFIFO:
    case EXT2_S_IFSOCK:
        return true;
    default:
        return false;
    }
}

/* A block an inode names directly: 0, or a block of the file system that is
 * not its metadata. */
static int check_pointer(struct ext2_fs *fs, uint32_t number, uint32_t block)
{
    if (block == 0)
        return 0;
    if (!ext2_block_in_range(fs, block))
        return ext2_corrupt(fs, number, block, "an inode's block pointer lies outside the disk");
    if (ext2_is_metadata(fs, block))
        return ext2_corrupt(fs, number, block, "an inode's block pointer names a metadata block");
    if (ext2_is_bad_block(fs, block))
        return ext2_corrupt(fs, number, block,
                            "an inode's block pointer names a block on the bad-block list");
    return 0;
}

static int check_size(struct ext2_fs *fs, uint32_t number, const struct ext2_inode *inode)
{
    uint64_t size = ext2_inode_size(inode);
    uint64_t largest = ext2_max_file_blocks(fs) * fs->block_size;
    if (size > largest)
        return ext2_corrupt(fs, number, 0, "an inode's size is beyond the largest file");
    if (!ext2_is_directory(inode) || inode->i_links_count == 0)
        return 0;
    if (size == 0)
        return ext2_corrupt(fs, number, 0, "a directory's size is 0");
    if (size % fs->block_size != 0)
        return ext2_corrupt(fs, number, 0, "a directory's size is not a multiple of the block");
    return 0;
}

static uint16_t osd2_u16(const struct ext2_inode *inode, uint32_t offset)
{
    uint16_t value;
    memcpy(&value, inode->i_osd2 + offset, sizeof value);
    return value;
}

/* Fields ext2 and ext3 leave 0 (e2fsck: "..., should be zero"). */
static int check_zero_fields(struct ext2_fs *fs, uint32_t number, const struct ext2_inode *inode)
{
    bool huge_file = fs->superblock.s_feature_ro_compat & EXT2_FEATURE_RO_COMPAT_HUGE_FILE;
    if ((!huge_file && osd2_u16(inode, EXT2_OSD2_BLOCKS_HIGH) != 0) ||
        osd2_u16(inode, EXT2_OSD2_FILE_ACL_HIGH) != 0 || inode->i_faddr != 0)
        return ext2_corrupt(fs, number, 0,
                            "an inode's i_blocks_hi, i_file_acl_hi or i_faddr is not 0");
    if (ext2_is_directory(inode) && inode->i_size_high != 0)
        return ext2_corrupt(fs, number, 0, "a directory's i_size_high (i_dir_acl) is not 0");
    return 0;
}

/* No block past the size: the direct pointers and indirect trees that
 * start at or beyond the last block of the size must be 0 (e2fsck: "causes
 * directory to be too big", a file's "i_size ... should be"). */
static int check_nothing_past_size(struct ext2_fs *fs, uint32_t number,
                                   const struct ext2_inode *inode)
{
    uint64_t size_blocks = (ext2_inode_size(inode) + fs->block_size - 1) / fs->block_size;
    uint64_t start = 0, span = 1;
    for (uint32_t i = 0; i < EXT2_BLOCK_POINTERS; i++) {
        if (i >= EXT2_DIRECT_BLOCKS)
            span *= fs->pointers_per_block;
        if (inode->i_block[i] != 0 && start >= size_blocks)
            return ext2_corrupt(fs, number, inode->i_block[i],
                                "an inode has a block past its size");
        start += span;
    }
    return 0;
}

void ext2_forget_checked_inodes(struct ext2_fs *fs)
{
    memset(fs->checked_inodes, 0, sizeof fs->checked_inodes);
}

/* Whether the inode's pointers are those that last passed the checks. */
static bool pointers_passed_before(const struct ext2_checked_inode *checked, uint32_t number,
                                   const struct ext2_inode *inode)
{
    return checked->number == number &&
           memcmp(checked->pointers, inode->i_block, sizeof inode->i_block) == 0 &&
           checked->pointers[EXT2_BLOCK_POINTERS] == inode->i_file_acl;
}

static int check_pointers(struct ext2_fs *fs, uint32_t number, const struct ext2_inode *inode)
{
    struct ext2_checked_inode *checked = &fs->checked_inodes[number % EXT2_CHECKED_INODES];
    if (pointers_passed_before(checked, number, inode))
        return 0;
    int status = 0;
    if (ext2_has_block_tree(inode))
        for (uint32_t i = 0; i < EXT2_BLOCK_POINTERS && status == 0; i++)
            status = check_pointer(fs, number, inode->i_block[i]);
    if (status == 0)
        status = check_pointer(fs, number, inode->i_file_acl);
    if (status == 0 && ext2_has_block_tree(inode)) {
        checked->number = number;
        memcpy(checked->pointers, inode->i_block, sizeof inode->i_block);
        checked->pointers[EXT2_BLOCK_POINTERS] = inode->i_file_acl;
    }
    return status;
}

int ext2_check_inode(struct ext2_fs *fs, uint32_t number, const struct ext2_inode *inode)
{
    if (inode->i_mode == 0 || (inode->i_links_count == 0 && inode->i_dtime != 0))
        return 0; /* free or deleted: nothing in it is used */
    if (!is_known_type(inode->i_mode))
        return ext2_corrupt(fs, number, 0, "an inode's file type is unknown");
    int status = check_zero_fields(fs, number, inode);
    if (status == 0)
        status = check_size(fs, number, inode);
    if (status == 0)
        status = check_pointers(fs, number, inode);
    if (status == 0 && ext2_has_block_tree(inode))
        status = check_nothing_past_size(fs, number, inode);
    return status;
}

int ext2_read_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode)
{
    int status = ext2_read_raw_inode(fs, number, inode);
    return status < 0 ? status : ext2_check_inode(fs, number, inode);
}

/* What a directory entry names must be a live inode outside the reserved ones. */
int ext2_read_named_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode)
{
    if (number != EXT2_ROOT_INODE && number < fs->first_inode)
        return ext2_corrupt(fs, number, 0, "a directory entry names a reserved inode");
    if (ext2_inode_in_bad_block(fs, number))
        return ext2_corrupt(fs, number, 0, "a directory entry names an inode in a bad block");
    int status = ext2_read_inode(fs, number, inode);
    if (status < 0)
        return status;
    if (inode->i_mode == 0 || inode->i_links_count == 0)
        return ext2_corrupt(fs, number, 0, "a directory entry names a free or deleted inode");
    return 0;
}

/* Only the fields the library knows are replaced; the rest of a large inode stays. */
int ext2_write_inode(struct ext2_fs *fs, uint32_t number, const struct ext2_inode *inode)
{
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    uint32_t block, offset;
    int status = read_inode_block(fs, number, buffer, &block, &offset);
    if (status < 0)
        return status;
    memcpy(buffer + offset, inode, core_length(fs));
    return ext2_write_block(fs, block, buffer);
}

/* A fresh inode: the whole on-disk slot is zeroed, then the core written. */
int ext2_initialize_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode,
                          uint16_t mode)
{
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    uint32_t block, offset;
    int status = read_inode_block(fs, number, buffer, &block, &offset);
    if (status < 0)
        return status;
    memset(buffer + offset, 0, fs->inode_size);
    memset(inode, 0, sizeof *inode);
    inode->i_mode = mode;
    ext2_set_owner(inode, fs->user.uid, fs->user.gid);
    inode->i_atime = inode->i_ctime = inode->i_mtime = fs->time;
    if (fs->inode_size >= EXT2_INODE_CORE_SIZE + 32)
        inode->i_extra_isize = 32;
    memcpy(buffer + offset, inode, core_length(fs));
    return ext2_write_block(fs, block, buffer);
}

bool ext2_is_directory(const struct ext2_inode *inode)
{
    return (inode->i_mode & EXT2_S_IFMT) == EXT2_S_IFDIR;
}

uint64_t ext2_inode_size(const struct ext2_inode *inode)
{
    uint64_t size = inode->i_size;
    if ((inode->i_mode & EXT2_S_IFMT) == EXT2_S_IFREG)
        size |= (uint64_t)inode->i_size_high << 32;
    return size;
}

void ext2_set_inode_size(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t size)
{
    inode->i_size = (uint32_t)size;
    if ((inode->i_mode & EXT2_S_IFMT) != EXT2_S_IFREG)
        return;
    inode->i_size_high = (uint32_t)(size >> 32);
    if (size > INT32_MAX &&
        !(fs->superblock.s_feature_ro_compat & EXT2_FEATURE_RO_COMPAT_LARGE_FILE)) {
        fs->superblock.s_feature_ro_compat |= EXT2_FEATURE_RO_COMPAT_LARGE_FILE;
        fs->superblock_dirty = true;
    }
}

/* Regular files, directories and symbolic links stored in blocks have a block
 * tree in i_block; devices, FIFOs and fast symbolic links keep other data there. */
bool ext2_has_block_tree(const struct ext2_inode *inode)
{
    uint16_t type = inode->i_mode & EXT2_S_IFMT;
    if (type == EXT2_S_IFREG || type == EXT2_S_IFDIR)
        return true;
    if (type != EXT2_S_IFLNK)
        return false;
    uint32_t extended_attribute_blocks = inode->i_file_acl ? 1 : 0;
    return inode->i_blocks > extended_attribute_blocks * 8 && inode->i_size >= 60;
}

/* Drops a shared extended-attribute block's reference, freeing it at zero. */
static int release_attribute_block(struct ext2_fs *fs, struct ext2_inode *inode)
{
    uint32_t block = inode->i_file_acl;
    if (block == 0)
        return 0;
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_block(fs, block, buffer);
    if (status < 0)
        return status;
    uint32_t magic, references;
    memcpy(&magic, buffer, 4);
    memcpy(&references, buffer + 4, 4);
    if (magic != 0xEA020000 || references == 0)
        return -E_CORRUPT;
    inode->i_file_acl = 0;
    if (--references == 0)
        return ext2_free_block(fs, block);
    memcpy(buffer + 4, &references, 4);
    return ext2_write_block(fs, block, buffer);
}

int ext2_release_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode)
{
    int status = 0;
    if (ext2_has_block_tree(inode))
        status = ext2_free_blocks_from(fs, inode, 0);
    if (status == 0)
        status = release_attribute_block(fs, inode);
    if (status < 0)
        return status;
    bool directory = ext2_is_directory(inode);
    inode->i_links_count = 0;
    inode->i_size = 0;
    inode->i_size_high = 0;
    inode->i_dtime = fs->time ? fs->time : 1;
    ext2_quota_charge(fs, inode, -(int64_t)inode->i_blocks); /* an attribute block's */
    status = ext2_write_inode(fs, number, inode);
    if (status < 0)
        return status;
    return ext2_free_inode(fs, number, directory);
}

int ext2_read_inode_to_change(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode)
{
    int status = ext2_check_writable(fs);
    return status < 0 ? status : ext2_read_inode(fs, number, inode);
}

static int release_unlinked(struct ext2_fs *fs, uint32_t number)
{
    struct ext2_inode inode;
    int status = ext2_read_inode_to_change(fs, number, &inode);
    if (status < 0)
        return status;
    if (inode.i_links_count > 0)
        return 0;
    if ((inode.i_mode & EXT2_S_IFMT) != EXT2_S_IFREG || inode.i_dtime != 0)
        return -E_CORRUPT; /* not a file kept open after its unlink */
    status = ext2_check_block_tree(fs, &inode);
    if (status == 0)
        status = ext2_release_inode(fs, number, &inode);
    int flushed = ext2_flush_superblock(fs);
    return status < 0 ? status : flushed;
}

int ext2_release_unlinked(struct ext2_fs *fs, uint32_t number)
{
    ext2_operation_begin(fs);
    return (int)ext2_operation_end(fs, release_unlinked(fs, number));
}
