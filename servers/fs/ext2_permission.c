/* ext2_permission.c: Unix ownership in the ext2 library: the owner an inode
 * records (16 bits in the core, 16 more in osd2, as Linux stores them), and
 * whether the user a request acts for (fs->user) may read, write or search it. */
#include "ext2_internal.h"

#define OSD2_UID_HIGH 4 /* Linux's l_i_uid_high and l_i_gid_high */
#define OSD2_GID_HIGH 6

static uint32_t high_half(const struct ext2_inode *inode, size_t at)
{
    return (uint32_t)inode->i_osd2[at] | (uint32_t)inode->i_osd2[at + 1] << 8;
}

static void set_high_half(struct ext2_inode *inode, size_t at, uint32_t value)
{
    inode->i_osd2[at] = (uint8_t)(value >> 16);
    inode->i_osd2[at + 1] = (uint8_t)(value >> 24);
}

uint32_t ext2_inode_uid(const struct ext2_inode *inode)
{
    return inode->i_uid | high_half(inode, OSD2_UID_HIGH) << 16;
}

uint32_t ext2_inode_gid(const struct ext2_inode *inode)
{
    return inode->i_gid | high_half(inode, OSD2_GID_HIGH) << 16;
}

void ext2_set_owner(struct ext2_inode *inode, uint32_t uid, uint32_t gid)
{
    inode->i_uid = (uint16_t)uid;
    inode->i_gid = (uint16_t)gid;
    set_high_half(inode, OSD2_UID_HIGH, uid);
    set_high_half(inode, OSD2_GID_HIGH, gid);
}

/* The mode's three bits that apply to the user: owner's, group's or others'. */
static uint32_t bits_for(const struct ext2_user *user, uint16_t mode, uint32_t uid, uint32_t gid)
{
    if (user->uid == uid)
        return (uint32_t)(mode >> 6) & 7u;
    if (user->gid == gid)
        return (uint32_t)(mode >> 3) & 7u;
    return (uint32_t)mode & 7u;
}

int ext2_permit_mode(const struct ext2_fs *fs, uint16_t mode, uint32_t uid, uint32_t gid,
                     uint32_t want)
{
    if (fs->user.uid == EXT2_ROOT_USER) /* root: all but executing what nobody may */
        return !(want & EXT2_MAY_EXECUTE) || (mode & EXT2_S_IFMT) == EXT2_S_IFDIR || (mode & 0111)
                   ? 0
                   : -E_PERMISSION;
    return (bits_for(&fs->user, mode, uid, gid) & want) == want ? 0 : -E_PERMISSION;
}

int ext2_permit(const struct ext2_fs *fs, const struct ext2_inode *inode, uint32_t want)
{
    return ext2_permit_mode(fs, inode->i_mode, ext2_inode_uid(inode), ext2_inode_gid(inode), want);
}

int ext2_permit_removal(const struct ext2_fs *fs, const struct ext2_inode *directory,
                        const struct ext2_inode *target)
{
    int status = ext2_permit(fs, directory, EXT2_MAY_WRITE | EXT2_MAY_EXECUTE);
    if (status < 0 || !(directory->i_mode & EXT2_S_ISVTX) || fs->user.uid == EXT2_ROOT_USER)
        return status;
    /* sticky: only the name's owner or the directory's removes it */
    bool owner =
        fs->user.uid == ext2_inode_uid(target) || fs->user.uid == ext2_inode_uid(directory);
    return owner ? 0 : -E_PERMISSION;
}

int ext2_change_mode(struct ext2_fs *fs, uint32_t number, uint16_t mode)
{
    struct ext2_inode inode;
    int status = ext2_read_inode_to_change(fs, number, &inode);
    if (status < 0)
        return status;
    if (fs->user.uid != EXT2_ROOT_USER && fs->user.uid != ext2_inode_uid(&inode))
        return -E_PERMISSION; /* only the owner or root */
    inode.i_mode = (uint16_t)((inode.i_mode & EXT2_S_IFMT) | (mode & 07777));
    inode.i_ctime = fs->time;
    return ext2_write_inode(fs, number, &inode);
}

int ext2_change_owner(struct ext2_fs *fs, uint32_t number, uint32_t uid, uint32_t gid)
{
    struct ext2_inode inode;
    int status = ext2_read_inode_to_change(fs, number, &inode);
    if (status < 0)
        return status;
    if (fs->user.uid != EXT2_ROOT_USER)
        return -E_PERMISSION;                                /* giving files away is root's */
    ext2_quota_charge(fs, &inode, -(int64_t)inode.i_blocks); /* its blocks go with it */
    ext2_set_owner(&inode, uid, gid);
    ext2_quota_charge(fs, &inode, inode.i_blocks);
    inode.i_ctime = fs->time;
    return ext2_write_inode(fs, number, &inode);
}
