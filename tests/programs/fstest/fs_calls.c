/* fs_calls.c: fstest's raw requests to FS and BLK, one helper per request
 * kind; every call is synchronous and reuses the same two ICAs. */
#include "fs_calls.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <string.h>

#define SERVER_WAIT_MS 30000

long fs_link_open(struct fs_link *link)
{
    link->fs = server_wait_for(SERVER_NAME_FS, SERVER_WAIT_MS);
    if (link->fs < 0)
        return link->fs;
    /* BLK's shards waited for too: an FS replica registers before the
     * shards have (fstest @1 right after boot), and the cases that tell
     * BLK's answers from FS's need their pids */
    if (blk_shards_open(&link->blk, SERVER_WAIT_MS) != 0)
        link->blk.count = 0;
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    long data = ica_allocate(ICA_KIND_DATA, FSTEST_DATA_BYTES);
    if (control < 0 || data < 0)
        return control < 0 ? control : data;
    link->control = (uint64_t)control;
    link->data = (uint64_t)data;
    return 0;
}

bool fs_link_is_blk(const struct fs_link *link, long pid)
{
    return blk_shards_index_of(&link->blk, pid) >= 0;
}

struct ica_control *fs_prepare(struct fs_link *link, uint32_t operation)
{
    request_prepare(link->control, operation);
    struct ica_control *page = ica_control_of(link->control);
    memset(page->payload, 0, 16);
    return page;
}

struct ica_control *fs_prepare_with_data(struct fs_link *link, uint32_t operation)
{
    struct ica_control *page = fs_prepare(link, operation);
    request_attach(link->control, link->data);
    return page;
}

void fs_set_path(struct ica_control *page, const char *path)
{
    strncpy((char *)page->payload, path, ICA_PAYLOAD_BYTES - 1);
    page->payload[ICA_PAYLOAD_BYTES - 1] = 0;
}

long fs_send(struct fs_link *link, long server)
{
    long error = ica_request(server, link->control, ICA_SYNC);
    return error != 0 ? error : ica_control_of(link->control)->result;
}

uint8_t *fs_data(const struct fs_link *link)
{
    return ica_address(link->data);
}

long fs_open_path(struct fs_link *link, const char *path, uint32_t flags)
{
    struct ica_control *page = fs_prepare(link, FS_OPEN);
    fs_open_of(page)->flags = flags;
    fs_set_path(page, path);
    return fs_send(link, link->fs);
}

static long transfer(struct fs_link *link, uint32_t operation, uint64_t handle, uint64_t offset,
                     uint64_t length)
{
    struct ica_control *page = fs_prepare_with_data(link, operation);
    if (operation == FS_READ)
        *fs_read_of(page) = (struct fs_read_message){handle, offset, length};
    else if (operation == FS_WRITE)
        *fs_write_of(page) = (struct fs_write_message){handle, offset, length};
    else
        *fs_readblock_of(page) = (struct fs_readblock_message){handle, offset, length};
    return fs_send(link, link->fs);
}

long fs_close_handle(struct fs_link *link, uint64_t handle)
{
    fs_close_of(fs_prepare(link, FS_CLOSE))->handle = handle;
    return fs_send(link, link->fs);
}

long fs_read_at(struct fs_link *link, uint64_t handle, uint64_t offset, uint64_t length)
{
    return transfer(link, FS_READ, handle, offset, length);
}

long fs_write_at(struct fs_link *link, uint64_t handle, uint64_t offset, uint64_t length)
{
    return transfer(link, FS_WRITE, handle, offset, length);
}

long fs_readblock(struct fs_link *link, uint64_t handle, uint64_t first, uint64_t count)
{
    return transfer(link, FS_READBLOCK, handle, first, count);
}

long fs_path_call(struct fs_link *link, uint32_t operation, const char *path)
{
    fs_set_path(fs_prepare(link, operation), path);
    return fs_send(link, link->fs);
}

long fs_stat_path(struct fs_link *link, const char *path, uint64_t *size)
{
    struct ica_control *page = fs_prepare(link, FS_STAT);
    fs_set_path(page, path);
    long result = fs_send(link, link->fs);
    *size = fs_stat_of(page)->size;
    return result;
}

long fs_stat_handle(struct fs_link *link, uint64_t handle, uint32_t *links)
{
    struct ica_control *page = fs_prepare(link, FS_STAT);
    fs_stat_of(page)->handle = handle;
    long result = fs_send(link, link->fs);
    *links = fs_stat_of(page)->links;
    return result;
}
