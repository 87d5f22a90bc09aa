/* file_requests.c: FS_READ, FS_WRITE, FS_TRUNCATE and FS_STAT on the
 * requester's handles: bytes move between the ext2 library and the
 * requester's data ICA directly (the library reads each block from BLK into
 * FS's buffer and copies out). */
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

long fs_refuse_directory(const struct ica_control *page)
{
    fs_refuse(page, "the handle names a directory");
    return -E_IS_DIRECTORY;
}

long fs_read(struct fs_server *server, uint64_t control, struct fs_read_message *message)
{
    struct ica_control *page = ica_control_of(control);
    long error = 0;
    struct open_file *file =
        fs_regular_file_of(server, page, message->handle, OPEN_FILE_READ, &error);
    if (file == NULL)
        return error;
    error = check_length(page, message->length);
    if (error == 0)
        error = fs_check_range(server, page, message->offset, message->length);
    if (error != 0)
        return error;
    long result = ext2_read(&server->fs, file->inode, message->offset, ica_address(page->data[0]),
                            message->length);
    return report_disk_trouble(page, file->inode, result);
}

long fs_write_with_data(struct fs_server *server, struct ica_control *page,
                        const struct fs_write_message *message)
{
    long error = 0;
    struct open_file *file =
        fs_regular_file_of(server, page, message->handle, OPEN_FILE_WRITE, &error);
    if (file == NULL)
        return error;
    error = check_length(page, message->length);
    if (error == 0)
        error = fs_check_range(server, page, message->offset, message->length);
    if (error != 0)
        return error;
    long result = ext2_write(&server->fs, file->inode, message->offset, ica_address(page->data[0]),
                             message->length);
    return report_disk_trouble(page, file->inode, result);
}

/* FS_WRITE's two ways: a few bytes in the payload (no data ICA) to
 * fs_small_write, else with the data ICA. */
long fs_write(struct fs_server *server, uint64_t control, struct fs_write_message *message)
{
    struct ica_control *page = ica_control_of(control);
    if (page->data_count == 0)
        return fs_small_write(server, control, message);
    return fs_write_with_data(server, page, message);
}

long fs_truncate(struct fs_server *server, uint64_t control, struct fs_truncate_message *message)
{
    struct ica_control *page = ica_control_of(control);
    long error = 0;
    struct open_file *file =
        fs_regular_file_of(server, page, message->handle, OPEN_FILE_WRITE, &error);
    if (file == NULL)
        return error;
    error = fs_check_range(server, page, message->size, 0);
    if (error != 0)
        return error;
    long result = ext2_truncate(&server->fs, file->inode, message->size);
    return report_disk_trouble(page, file->inode, result);
}

static void put_stat(struct fs_stat_message *message, const struct ext2_stat *stat)
{
    message->size = stat->size;
    message->mode = stat->mode;
    message->links = stat->links;
    message->blocks = stat->blocks;
    message->inode = stat->inode;
    message->uid = stat->uid;
    message->gid = stat->gid;
}

/* The inode a stat names: the payload's path, or else the requester's handle. */
static long stat_target(struct fs_server *server, const struct ica_control *page,
                        const struct fs_stat_message *message, uint32_t *inode)
{
    const char *path = fs_payload_path(page);
    if (path == NULL)
        return -E_INVALID;
    if (path[0] != '\0') {
        fs_act_for_sender(server, page);
        return ext2_lookup(&server->fs, path, inode);
    }
    long error = 0;
    struct open_file *file = fs_handle_of(server, page, message->handle, 0, &error);
    if (file == NULL)
        return error;
    if (file->flags & OPEN_FILE_REMOVED)
        return -E_NOT_FOUND; /* a directory removed while open: its inode may be reused */
    *inode = file->inode;
    return 0;
}

long fs_stat(struct fs_server *server, uint64_t control, struct fs_stat_message *message)
{
    struct ica_control *page = ica_control_of(control);
    uint32_t inode = 0;
    long error = stat_target(server, page, message, &inode);
    if (error != 0)
        return report_disk_trouble(page, inode, error);
    struct ext2_stat stat;
    error = ext2_stat(&server->fs, inode, &stat);
    if (error != 0)
        return report_disk_trouble(page, inode, error);
    put_stat(message, &stat);
    return 0;
}
