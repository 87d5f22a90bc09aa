/* ext2_public_map.c: ext2_file_blocks(), a public wrapper of the library's
 * ext2_map_block (ext2_internal.h) for FS_READBLOCK: one inode read, then
 * the checked walk of the block tree per block; nothing is allocated. */
#include "ext2_public_map.h"
#include "ext2_internal.h"
#include <formica/errors.h>

int ext2_file_blocks(struct ext2_fs *fs, uint32_t inode, uint64_t first, uint32_t count,
                     uint32_t *disk_blocks, uint64_t *size)
{
    struct ext2_inode record;
    int error = ext2_read_inode(fs, inode, &record);
    if (error != 0)
        return error;
    uint16_t type = record.i_mode & EXT2_S_IFMT;
    if (type != EXT2_S_IFREG)
        return type == EXT2_S_IFDIR ? -E_IS_DIRECTORY : -E_INVALID;
    *size = ext2_inode_size(&record);
    for (uint32_t i = 0; i < count; i++) {
        disk_blocks[i] = 0;
        if (first + i >= ext2_max_file_blocks(fs))
            continue;
        error = ext2_map_block(fs, &record, first + i, &disk_blocks[i]);
        if (error != 0)
            return error;
    }
    return 0;
}
