/* ext2_in_place.c: the ext2 side of FS's in-place small writes
 * (ext2_in_place.h): one inode read and a block-map walk, nothing allocated;
 * and the deferred stamp of the inode's times. */
#include "ext2_in_place.h"
#include "ext2_internal.h"
#include <formica/errors.h>

int ext2_in_place_target(struct ext2_fs *fs, uint32_t inode, uint64_t offset, uint32_t length,
                         uint32_t *block, uint32_t *within)
{
    int error = ext2_check_writable(fs);
    struct ext2_inode record;
    if (error == 0)
        error = ext2_read_inode(fs, inode, &record);
    if (error != 0)
        return error;
    uint16_t type = record.i_mode & EXT2_S_IFMT;
    if (type != EXT2_S_IFREG)
        return type == EXT2_S_IFDIR ? -E_IS_DIRECTORY : -E_INVALID;
    uint64_t logical = offset / fs->block_size;
    *within = (uint32_t)(offset % fs->block_size);
    if (length == 0 || *within + length > fs->block_size ||
        offset + length > ext2_inode_size(&record))
        return -E_NEEDS_DATA;
    error = ext2_map_block(fs, &record, logical, block);
    if (error != 0)
        return error;
    return *block == 0 ? -E_NEEDS_DATA : 0;
}

int ext2_in_place_touch(struct ext2_fs *fs, uint32_t inode)
{
    struct ext2_inode record;
    int error = ext2_read_inode(fs, inode, &record);
    if (error != 0)
        return error;
    record.i_mtime = record.i_ctime = fs->time;
    return ext2_write_inode(fs, inode, &record);
}
