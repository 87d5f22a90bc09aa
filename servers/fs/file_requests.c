/* file_requests.c: FS_READ, FS_WRITE, FS_TRUNCATE and FS_STAT: bytes move
 * between the ext2 library and the requester's data ICA directly (the
 * library reads each block from BLK into FS's buffer and copies out). */
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/storage.h>
#include <stdio.h>

static long check_length(const struct ica_control *page)
{
    if (page->argument[2] > ICA_DATA_MAX_BYTES)
        return fs_refuse(page, "length over the largest data ICA");
    if (!fs_data_fits(page, page->argument[2]))
        return -E_INVALID;
    return 0;
}

static long report_disk_trouble(const struct ica_control *page, long result)
{
    if (result == -E_CORRUPT || result == -E_IO)
        printf("fs: request %u on inode %lu: %s\n", page->operation, page->argument[0],
               error_text(result));
    return result;
}

long fs_read(struct fs_server *server, struct ica_control *page)
{
    long error = check_length(page);
    if (error != 0)
        return error;
    long result = ext2_read(&server->fs, (uint32_t)page->argument[0], page->argument[1],
                            ica_address(page->data[0]), page->argument[2]);
    return report_disk_trouble(page, result);
}

long fs_write(struct fs_server *server, struct ica_control *page)
{
    long error = check_length(page);
    if (error != 0)
        return error;
    long result = ext2_write(&server->fs, (uint32_t)page->argument[0], page->argument[1],
                             ica_address(page->data[0]), page->argument[2]);
    return report_disk_trouble(page, result);
}

long fs_truncate(struct fs_server *server, struct ica_control *page)
{
    long result = ext2_truncate(&server->fs, (uint32_t)page->argument[0], page->argument[1]);
    return report_disk_trouble(page, result);
}

static void put_stat(struct ica_control *page, const struct ext2_stat *stat)
{
    page->argument[1] = stat->size;
    page->argument[2] = stat->mode;
    page->argument[3] = stat->links;
    page->argument[4] = stat->blocks;
    page->argument[5] = stat->inode;
}

long fs_stat(struct fs_server *server, struct ica_control *page)
{
    uint32_t inode = (uint32_t)page->argument[0];
    const char *path = fs_payload_path(page);
    if (path == NULL)
        return -E_INVALID;
    if (path[0] != '\0') {
        int error = ext2_lookup(&server->fs, path, &inode);
        if (error != 0)
            return report_disk_trouble(page, error);
    }
    struct ext2_stat stat;
    int error = ext2_stat(&server->fs, inode, &stat);
    if (error != 0)
        return report_disk_trouble(page, error);
    put_stat(page, &stat);
    return 0;
}
