/* fs_replica.c: an FS replica (instance i > 0, docs/storage.md "FS
 * replicas"): it mounts the disk read-only, reads metadata through the
 * owner's operation log (images first, then BLK), drops what it cached
 * from each block the log says changed, and serves reads on its own
 * handles; every change, and every request on the owner's handles, goes to
 * the owner (fs_replica_route; the serve loop forwards). */
#include "block_client.h"
#include "block_map_cache.h"
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/protocol/fs.h>
#include <formica/published_region.h>
#include <formica/refusal_log.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>

#define OWNER_WAIT_MS 120000 /* for the owner's log, as long as for a server's start */

static struct operation_log_reader reader;
static struct ext2_device replica_device; /* what the library reads through */
static struct ext2_device *blk_device;    /* BLK's, with its recent copies */

/* A block the owner changed: its recent copy goes, and when it held
 * metadata, every remembered block map (it may have moved a block). */
static void forget_block(void *context, uint32_t block, enum operation_kind kind)
{
    (void)context;
    uint64_t byte = (uint64_t)block * reader.block_size;
    block_client_forget(byte / STORAGE_BLOCK_BYTES);
    if (kind != OPERATION_DATA)
        block_map_cache_clear();
}

static void forget_everything(void *context)
{
    (void)context;
    block_client_forget_all();
    block_map_cache_clear();
}

static int read_bytes(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    (void)context;
    if (operation_log_read(&reader, (uint32_t)block, offset, buffer, length))
        return 0;
    return blk_device->read_bytes(blk_device->context, block, offset, buffer, length);
}

/* A file's contents: never from a recent copy, which a BLK_PATCH forwarded
 * by the owner would not reach. */
static int read_data(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    (void)context;
    if (operation_log_read(&reader, (uint32_t)block, offset, buffer, length))
        return 0;
    return block_client_read_uncached(blk_device, block, offset, buffer, length);
}

static int refuse_write(void *context, uint64_t block, const void *buffer)
{
    (void)context, (void)buffer;
    printf("fs: a replica was asked to write block %lu: refused\n", (unsigned long)block);
    return -E_READ_ONLY;
}

/* Maps the owner's log and waits until an owner has taken it. */
static const struct operation_log *open_log(const struct fs_server *server)
{
    long address = system_call_published_region(SERVER_NAME_FS, OPERATION_LOG_REGION_BYTES);
    if (address < 0) {
        printf("fs: replica %u: no published region (%s): every request goes to the owner\n",
               server->instance.index, error_text(address));
        return NULL;
    }
    const struct operation_log *log = (const struct operation_log *)address;
    for (uint64_t waited = 0; !operation_log_ready(log); waited += 10) {
        if (waited >= OWNER_WAIT_MS) {
            printf("fs: the owner never published its log: every request goes to it\n");
            return NULL;
        }
        sleep_ms(10);
    }
    return log;
}

static void install_device(struct fs_server *server)
{
    blk_device = &server->device;
    replica_device = (struct ext2_device){
        .context = &replica_device,
        .block_size = server->fs.block_size,
        .read_bytes = read_bytes,
        .read_data = read_data,
        .write_block = refuse_write,
        .write_data = refuse_write,
        .report_problem = blk_device->report_problem,
        .report_context = blk_device->report_context,
    };
    server->fs.device = &replica_device;
}

long fs_replica_start(struct fs_server *server)
{
    server->owner_pid = server_wait_for_instance(SERVER_NAME_FS, 0, OWNER_WAIT_MS);
    const struct operation_log *log = open_log(server);
    long error = block_client_open(&server->device, &server->blk_pid);
    if (error == 0)
        error = ext2_mount(&server->fs, &server->device);
    if (error != 0 || log == NULL) {
        server->mounted = false;
        return error != 0 ? error : -E_NOT_FOUND;
    }
    server->fs.read_only = true;
    server->fs.read_only_reason = "a replica: changes go to the owner";
    install_device(server);
    operation_log_reader_init(&reader, log, server->fs.block_size, forget_block,
                              forget_everything, NULL);
    operation_log_catch_up(&reader);
    server->replica = &reader;
    server->mounted = true;
    printf("fs: replica %u of %u: mounted read-only, %u-byte blocks; changes go to the owner "
           "(pid %ld)\n",
           server->instance.index, server->instance.count, server->fs.block_size,
           server->owner_pid);
    return 0;
}

bool fs_replica_holds(const struct fs_server *server, const uint32_t *blocks, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (operation_log_holds(server->replica, blocks[i]))
            return true;
    return false;
}

/* The handle a request names, if it names one (false: a path request). */
static bool handle_of(struct ica_control *page, uint64_t *handle)
{
    switch (page->operation) {
    case FS_READ:
        *handle = fs_read_of(page)->handle;
        return true;
    case FS_WRITE:
        *handle = fs_write_of(page)->handle;
        return true;
    case FS_READBLOCK:
        *handle = fs_readblock_of(page)->handle;
        return true;
    case FS_STAT:
        *handle = fs_stat_of(page)->handle;
        return page->payload[0] == '\0';
    case FS_TRUNCATE:
        *handle = fs_truncate_of(page)->handle;
        return true;
    case FS_READDIR:
        *handle = fs_readdir_of(page)->handle;
        return true;
    case FS_CLOSE:
        *handle = fs_close_of(page)->handle;
        return true;
    case FS_FSYNC:
        *handle = fs_fsync_of(page)->handle;
        return true;
    }
    return false;
}

/* A path request: an open for reading only and a stat are served here. */
static enum fs_route route_path_request(struct ica_control *page)
{
    if (page->operation == FS_STAT)
        return FS_ROUTE_SERVE;
    if (page->operation == FS_OPEN &&
        (fs_open_of(page)->flags & ~(FS_OPEN_READ | FS_OPEN_DIRECTORY)) == 0)
        return FS_ROUTE_SERVE;
    return FS_ROUTE_FORWARD;
}

enum fs_route fs_replica_route(struct fs_server *server, struct ica_control *page)
{
    if (server->replica == NULL)
        return FS_ROUTE_FORWARD; /* no log: nothing here can be trusted to be current */
    uint64_t handle = 0;
    if (!handle_of(page, &handle))
        return route_path_request(page);
    uint32_t instance = open_file_instance_of(handle);
    if (instance == 0)
        return FS_ROUTE_FORWARD;
    if (instance != server->instance.index) {
        refusal_log("fs", page->sender_account,
                    "fs: request %u from pid %u refused: handle 0x%lx belongs to FS instance %u, "
                    "not to this one (%u)\n",
                    page->operation, page->origin, handle, instance, server->instance.index);
        return FS_ROUTE_REFUSED;
    }
    if (page->operation == FS_FSYNC &&
        open_files_find(server->open_files, page->origin, handle) != NULL) {
        page->operation = FS_SYNC; /* its file changes nothing here: the owner's changes go */
        return FS_ROUTE_FORWARD;
    }
    return FS_ROUTE_SERVE;
}
