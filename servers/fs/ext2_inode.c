/* ext2_inode.c: reading and writing inodes in the inode tables, their size
 * and type, setting up a fresh inode and releasing one whose last link is
 * gone (its blocks, then its bitmap bit), now or, for a file kept open after
 * its unlink, at its last close. */
#include "ext2_internal.h"

static int locate_inode(struct ext2_fs *fs, uint32_t number, uint32_t *block, uint32_t *offset)
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
    int status = locate_inode(fs, number, block, offset);
    return status == 0 ? ext2_read_block(fs, *block, buffer) : status;
}

/* How many bytes of struct ext2_inode the on-disk slot holds. */
static size_t core_length(const struct ext2_fs *fs)
{
    return fs->inode_size < sizeof(struct ext2_inode) ? fs->inode_size : sizeof(struct ext2_inode);
}

int ext2_read_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode)
{
    uint32_t block, offset;
    int status = locate_inode(fs, number, &block, &offset);
    memset(inode, 0, sizeof *inode);
    if (status == 0)
        status = ext2_read_bytes(fs, block, offset, inode, (uint32_t)core_length(fs));
    return status;
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

int ext2_release_unlinked(struct ext2_fs *fs, uint32_t number)
{
    struct ext2_inode inode;
    int status = ext2_check_writable(fs);
    if (status == 0)
        status = ext2_read_inode(fs, number, &inode);
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
