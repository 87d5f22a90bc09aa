/* file_requests.c: FS_READ, FS_WRITE, FS_TRUNCATE and FS_STAT: bytes move
 * between the ext2 library and the requester's data ICA directly (the
 * library reads each block from BLK into FS's buffer and copies out). */
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/storage.h>
#include <stdio.h>

static long check_length(const struct ica_control *page, uint64_t length)
{
    if (length > ICA_DATA_MAX_BYTES)
        return fs_refuse(page, "length over the largest data ICA");
    if (!fs_data_fits(page, length))
        return -E_INVALID;
    return 0;
}

static long report_disk_trouble(const struct ica_control *page, uint64_t inode, long result)
{
    if (result == -E_CORRUPT || result == -E_IO)
        printf("fs: %s on inode %lu: %s\n", fs_operation_name(page->operation), inode,
               error_text(result));
    return result;
}

long fs_read(struct fs_server *server, uint64_t control, struct fs_read_message *message)
{
    struct ica_control *page = ica_control_of(control);
    long error = check_length(page, message->length);
    if (error != 0)
        return error;
    long result = ext2_read(&server->fs, (uint32_t)message->inode, message->offset,
                            ica_address(page->data[0]), message->length);
    return report_disk_trouble(page, message->inode, result);
}

long fs_write(struct fs_server *server, uint64_t control, struct fs_write_message *message)
{
    struct ica_control *page = ica_control_of(control);
    long error = check_length(page, message->length);
    if (error != 0)
        return error;
    long result = ext2_write(&server->fs, (uint32_t)message->inode, message->offset,
                             ica_address(page->data[0]), message->length);
    return report_disk_trouble(page, message->inode, result);
}

long fs_truncate(struct fs_server *server, uint64_t control, struct fs_truncate_message *message)
{
    long result = ext2_truncate(&server->fs, (uint32_t)message->inode, message->size);
    return report_disk_trouble(ica_control_of(control), message->inode, result);
}

static void put_stat(struct fs_stat_message *message, const struct ext2_stat *stat)
{
    message->size = stat->size;
    message->mode = stat->mode;
    message->links = stat->links;
    message->blocks = stat->blocks;
    message->inode = stat->inode;
}

long fs_stat(struct fs_server *server, uint64_t control, struct fs_stat_message *message)
{
    struct ica_control *page = ica_control_of(control);
    uint32_t inode = (uint32_t)message->inode;
    const char *path = fs_payload_path(page);
    if (path == NULL)
        return -E_INVALID;
    if (path[0] != '\0') {
        int error = ext2_lookup(&server->fs, path, &inode);
        if (error != 0)
            return report_disk_trouble(page, inode, error);
    }
    struct ext2_stat stat;
    int error = ext2_stat(&server->fs, inode, &stat);
    if (error != 0)
        return report_disk_trouble(page, inode, error);
    put_stat(message, &stat);
    return 0;
}
