/* dispatch.c: FS's request checks shared by the handlers, and the choice of
 * handler by operation. Without a mounted file system every request gets
 * the mount's error (-E_CORRUPT or -E_IO). */
#include "block_client.h"
#include "fs_server.h"
#include <formica/data_ica.h>
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>
#include <string.h>

long fs_refuse(const struct ica_control *page, const char *why)
{
    printf("fs: request %u from pid %u refused: %s\n", page->operation, page->sender, why);
    return -E_INVALID;
}

const char *fs_payload_path(const struct ica_control *page)
{
    const char *path = (const char *)page->payload;
    if (strnlen(path, ICA_PAYLOAD_BYTES) == ICA_PAYLOAD_BYTES) {
        fs_refuse(page, "path not NUL-terminated in the payload");
        return NULL;
    }
    return path;
}

bool fs_data_fits(const struct ica_control *page, uint64_t bytes)
{
    if (data_ica_holds(page, 0, bytes))
        return true;
    fs_refuse(page, "no data ICA, or one smaller than the length");
    return false;
}

static long sync_all(void)
{
    long result = block_client_sync();
    if (result < 0)
        printf("fs: sync failed: %s\n", error_text(result));
    return result;
}

static long mounted_answer(struct fs_server *server, uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    switch (page->operation) {
    case FS_OPEN:
        return fs_open(server, page);
    case FS_READ:
        return fs_read(server, page);
    case FS_WRITE:
        return page->data_count == 0 ? fs_small_write(server, control) : fs_write(server, page);
    case FS_READBLOCK:
        return fs_readblock(server, control);
    case FS_STAT:
        return fs_stat(server, page);
    case FS_TRUNCATE:
        return fs_truncate(server, page);
    case FS_UNLINK:
        return fs_unlink(server, page);
    case FS_MKDIR:
        return fs_mkdir(server, page);
    case FS_RMDIR:
        return fs_rmdir(server, page);
    case FS_RENAME:
        return fs_rename(server, page);
    case FS_READDIR:
        return fs_readdir(server, page);
    case FS_SYNC:
        return sync_all();
    default:
        return fs_refuse(page, "unknown operation");
    }
}

long fs_not_forwarded(struct ica_control *page, uint32_t operation, long error)
{
    printf("fs: forward of request %u to blk failed: %s\n", operation, error_text(error));
    if (page->operation == BLK_PATCH)
        block_client_forget(page->argument[0]);
    page->operation = operation;
    return error;
}

long fs_answer(struct fs_server *server, uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    if (page->operation < FS_OPEN || page->operation > FS_SYNC)
        return fs_refuse(page, "unknown operation");
    if (!server->mounted)
        return server->unmounted_error;
    return mounted_answer(server, control);
}
