/* ext2_file.c: file contents: stat, read (holes read as zeros), write
 * (allocating blocks near the previous one, extending the size) and truncate
 * (freeing blocks past the new end and zeroing the last block's tail); a
 * write or truncate is one operation (ext2_operation.c). */
#include "ext2_internal.h"

int ext2_stat(struct ext2_fs *fs, uint32_t number, struct ext2_stat *stat)
{
    struct ext2_inode inode;
    int status = ext2_read_inode(fs, number, &inode);
    if (status < 0)
        return status;
    stat->inode = number;
    stat->mode = inode.i_mode;
    stat->links = inode.i_links_count;
    stat->uid = ext2_inode_uid(&inode);
    stat->gid = ext2_inode_gid(&inode);
    stat->size = ext2_inode_size(&inode);
    stat->blocks = inode.i_blocks;
    stat->atime = inode.i_atime;
    stat->mtime = inode.i_mtime;
    stat->ctime = inode.i_ctime;
    return 0;
}

/* `length` bytes at `within` in the file's block `logical`, straight into buffer. */
static int read_file_part(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t logical,
                          uint32_t within, uint8_t *buffer, uint32_t length)
{
    uint32_t physical;
    int status = ext2_map_block(fs, inode, logical, &physical);
    if (status < 0)
        return status;
    if (physical == 0) {
        memset(buffer, 0, length);
        return 0;
    }
    return ext2_read_data_bytes(fs, physical, within, buffer, length);
}

long ext2_read(struct ext2_fs *fs, uint32_t number, uint64_t offset, void *buffer, size_t length)
{
    struct ext2_inode inode;
    int status = ext2_read_inode(fs, number, &inode);
    if (status < 0)
        return status;
    if (!ext2_has_block_tree(&inode))
        return -E_INVALID;
    uint64_t size = ext2_inode_size(&inode);
    if (offset >= size)
        return 0;
    if (length > size - offset)
        length = (size_t)(size - offset);
    if (length > INT32_MAX)
        length = INT32_MAX;
    size_t done = 0;
    while (done < length) {
        uint64_t position = offset + done;
        uint32_t within = (uint32_t)(position % fs->block_size);
        size_t chunk = fs->block_size - within;
        if (chunk > length - done)
            chunk = length - done;
        status = read_file_part(fs, &inode, position / fs->block_size, within,
                                (uint8_t *)buffer + done, (uint32_t)chunk);
        if (status < 0)
            return status;
        done += chunk;
    }
    return (long)done;
}

/* Writes one block's part; a new block is zero outside the part written. */
static int write_file_block(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t logical,
                            uint32_t within, const uint8_t *data, size_t chunk, uint32_t *goal)
{
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    uint32_t physical;
    bool created;
    int status = ext2_map_block_create(fs, inode, logical, *goal, &physical, &created);
    if (status < 0)
        return status;
    *goal = physical + 1;
    if (created)
        memset(block, 0, fs->block_size);
    else if (chunk < fs->block_size && (status = ext2_read_block(fs, physical, block)) < 0)
        return status;
    memcpy(block + within, data, chunk);
    return ext2_write_data_block(fs, physical, block);
}

static uint32_t inode_group_goal(const struct ext2_fs *fs, uint32_t number)
{
    uint32_t group = (number - 1) / fs->superblock.s_inodes_per_group;
    return ext2_group_first_block(fs, group);
}

static long write_file(struct ext2_fs *fs, uint32_t number, uint64_t offset, const void *buffer,
                       size_t length)
{
    struct ext2_inode inode;
    int status = ext2_read_inode_to_change(fs, number, &inode);
    if (status < 0)
        return status;
    if ((inode.i_mode & EXT2_S_IFMT) != EXT2_S_IFREG)
        return ext2_is_directory(&inode) ? -E_IS_DIRECTORY : -E_INVALID;
    if (length > INT32_MAX)
        length = INT32_MAX;
    uint64_t limit = ext2_max_file_blocks(fs) * fs->block_size;
    if (offset > limit || length > limit - offset)
        return -E_TOO_BIG;
    uint32_t goal = inode_group_goal(fs, number);
    size_t done = 0;
    while (done < length) {
        uint64_t position = offset + done;
        uint32_t within = (uint32_t)(position % fs->block_size);
        size_t chunk = fs->block_size - within;
        if (chunk > length - done)
            chunk = length - done;
        status = write_file_block(fs, &inode, position / fs->block_size, within,
                                  (const uint8_t *)buffer + done, chunk, &goal);
        if (status < 0)
            break;
        done += chunk;
    }
    if (done == 0 && length > 0)
        return status < 0 ? status : -E_IO;
    if (offset + done > ext2_inode_size(&inode))
        ext2_set_inode_size(fs, &inode, offset + done);
    inode.i_mtime = inode.i_ctime = fs->time;
    int written = ext2_write_inode(fs, number, &inode);
    int flushed = ext2_flush_superblock(fs);
    if (written < 0 || flushed < 0)
        return written < 0 ? written : flushed;
    return (long)done;
}

/* After shrinking into the middle of a block, its tail must read as zeros
 * if the file grows again. */
static int zero_block_tail(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t size)
{
    uint32_t within = (uint32_t)(size % fs->block_size);
    if (within == 0)
        return 0;
    uint32_t physical;
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_map_block(fs, inode, size / fs->block_size, &physical);
    if (status < 0 || physical == 0)
        return status;
    status = ext2_read_block(fs, physical, block);
    if (status < 0)
        return status;
    memset(block + within, 0, fs->block_size - within);
    return ext2_write_data_block(fs, physical, block);
}

long ext2_write(struct ext2_fs *fs, uint32_t number, uint64_t offset, const void *buffer,
                size_t length)
{
    ext2_operation_begin(fs);
    return ext2_operation_end(fs, write_file(fs, number, offset, buffer, length));
}

static int truncate_file(struct ext2_fs *fs, uint32_t number, uint64_t size)
{
    struct ext2_inode inode;
    int status = ext2_read_inode_to_change(fs, number, &inode);
    if (status < 0)
        return status;
    if ((inode.i_mode & EXT2_S_IFMT) != EXT2_S_IFREG)
        return ext2_is_directory(&inode) ? -E_IS_DIRECTORY : -E_INVALID;
    if (size > ext2_max_file_blocks(fs) * fs->block_size)
        return -E_TOO_BIG;
    struct ext2_inode before = inode;
    if (size < ext2_inode_size(&inode)) {
        uint64_t keep = (size + fs->block_size - 1) / fs->block_size;
        status = ext2_free_blocks_from(fs, &inode, keep);
        if (status == 0)
            status = zero_block_tail(fs, &inode, size);
        if (status < 0 && memcmp(&before, &inode, sizeof inode) != 0) {
            ext2_write_inode(fs, number, &inode); /* keep the pointers already cleared */
            ext2_flush_superblock(fs);
        }
        if (status < 0)
            return status;
    }
    ext2_set_inode_size(fs, &inode, size);
    inode.i_mtime = inode.i_ctime = fs->time;
    status = ext2_write_inode(fs, number, &inode);
    int flushed = ext2_flush_superblock(fs);
    return status < 0 ? status : flushed;
}

int ext2_truncate(struct ext2_fs *fs, uint32_t number, uint64_t size)
{
    ext2_operation_begin(fs);
    return (int)ext2_operation_end(fs, truncate_file(fs, number, size));
}
