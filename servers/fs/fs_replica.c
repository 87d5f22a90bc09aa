/* fs_replica.c: an FS replica (instance i > 0, docs/storage.md "FS
 * replicas"): it mounts the disk read-only, reads metadata through the
 * owner's operation log (images first, then BLK), drops what it cached
 * from each block the log says changed, and serves FS_READ, FS_READBLOCK,
 * FS_STAT and FS_READDIR on the owner's handles (the mirror of its table);
 * every other request goes to the owner (fs_replica_route; the serve loop
 * forwards). Its reads of BLK are as of the log it applied (a block the
 * owner freed since is refused, and so is file data it wrote since:
 * -E_STALE, and the request is answered again as of a new view). */
#include "block_client.h"
#include "block_pins.h"
#include "block_map_cache.h"
#include "fs_published.h"
#include "fs_server.h"
#include "open_files_mirror.h"
#include <formica/errors.h>
#include <formica/protocol/fs.h>
#include <formica/published_region.h>
#include <formica/refusal_log.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

#define OWNER_WAIT_MS 120000 /* for the owner's log, as long as for a server's start */

static struct operation_log_reader reader;
static struct ext2_device replica_device; /* what the library reads through */
static struct ext2_device *blk_device;    /* BLK's, with its recent copies */
/* The owner's handles as this replica last copied them (the slot a request
 * names is copied again before the request: fs_replica_route), and the
 * owner's table in the published region they are copied from. */
static struct open_files handles;
static const struct open_files *owner_handles;

/* A block the owner changed: its recent copy goes, and when it held
 * metadata, every remembered block map (it may have moved a block), unless
 * the change was inodes' times alone (a small write's mtime). A block it
 * freed goes from the borrowed ones too: the owner may now give it to
 * another file. */
static void forget_block(void *context, uint32_t block, enum operation_kind kind)
{
    (void)context;
    uint64_t disk_block = (uint64_t)block * reader.block_size / STORAGE_BLOCK_BYTES;
    block_client_forget(disk_block);
    if (kind != OPERATION_DATA && kind != OPERATION_TIMES)
        block_map_cache_clear();
    if (kind == OPERATION_FREED)
        block_pins_forget(disk_block);
}

static void forget_everything(void *context)
{
    (void)context;
    block_client_forget_all();
    block_map_cache_clear();
    block_pins_forget_all();
}

static uint64_t pause_ms; /* fs_replica_delay=MS (fs_server.h) */
static bool paused;       /* this request's pause is over */
static bool inode_read;   /* this request has read an inode table block */

void fs_replica_catch_up(struct fs_server *server)
{
    operation_log_catch_up(server->replica);
    block_client_view_set(server->replica->applied);
    paused = false;
    inode_read = false;
}

void fs_replica_pause(void)
{
    if (pause_ms == 0 || paused)
        return;
    paused = true;
    uint64_t from = clock_microseconds();
    sleep_ms(pause_ms);
    uint64_t to = clock_microseconds();
    printf("@json {\"kind\":\"fs_replica_pause\",\"from_us\":%lu,\"to_us\":%lu,"
           "\"as_of\":%lu}\n",
           (unsigned long)from, (unsigned long)to, (unsigned long)block_client_view.as_of);
}

static void read_pause_option(void)
{
    char value[24] = "";
    if (kernel_option("fs_replica_delay", value, sizeof value) > 0)
        pause_ms = strtoul(value, NULL, 0);
}

/* Bytes of block `block` from its image in the owner's log, if one holds
 * it as the request's view has it: 0; -E_STALE when the owner rewrote it
 * after the view (it may be the block's next owner's: the request is
 * answered again as of a newer view); 1 when no image holds it (BLK has
 * its newest contents, and checks the view). */
static int read_image(uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    switch (operation_log_read(&reader, (uint32_t)block, offset, buffer, length)) {
    case OPERATION_IMAGE_COPIED:
        return 0;
    case OPERATION_IMAGE_NEWER:
        return -E_STALE;
    case OPERATION_IMAGE_NONE:
        break;
    }
    return 1;
}

static const struct ext2_fs *replica_fs; /* the replica's mount (install_device) */

/* fs_replica_delay's pause at the request's first read of a block past an
 * inode (an indirect or directory block): group descriptors and inodes
 * before it are read as of the view, what the inode leads to after. */
static void pause_past_inode(uint32_t block)
{
    if (ext2_is_inode_table_block(replica_fs, block))
        inode_read = true;
    else if (inode_read)
        fs_replica_pause();
}

static int read_bytes(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    (void)context;
    if (pause_ms != 0)
        pause_past_inode((uint32_t)block);
    int found = read_image(block, offset, buffer, length);
    if (found <= 0)
        return found;
    int error = blk_device->read_bytes(blk_device->context, block, offset, buffer, length);
    if (error == 0 && operation_log_unfinished_after_view(&reader)) {
        /* it may show part of a request the view does not hold: looked at
         * again as of a newer view, not from the copy just kept */
        block_client_forget((uint64_t)block * reader.block_size / STORAGE_BLOCK_BYTES);
        return -E_STALE;
    }
    return error;
}

/* A file's contents: never from a recent copy, which a BLK_PATCH forwarded
 * by the owner would not reach; and not bytes the owner wrote in place
 * after the view (a truncate's zeroed tail read with the size from before
 * it): -E_STALE, the request answered again as of a newer view. */
static int read_data(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    (void)context;
    fs_replica_pause();
    int found = read_image(block, offset, buffer, length);
    if (found <= 0)
        return found;
    int error = block_client_read_uncached(blk_device, block, offset, buffer, length);
    if (error == 0 && operation_log_data_written_after_view(&reader, (uint32_t)block))
        return -E_STALE;
    return error;
}

static int refuse_write(void *context, uint64_t block, const void *buffer)
{
    (void)context, (void)buffer;
    printf("fs: a replica was asked to write block %lu: refused\n", (unsigned long)block);
    return -E_READ_ONLY;
}

/* Maps the owner's published region and waits until an owner has taken it. */
static const struct fs_published *open_published(const struct fs_server *server)
{
    long address = system_call_published_region(SERVER_NAME_FS, FS_PUBLISHED_BYTES);
    if (address < 0) {
        printf("fs: replica %u: no published region (%s): every request goes to the owner\n",
               server->instance.index, error_text(address));
        return NULL;
    }
    const struct fs_published *published = (const struct fs_published *)address;
    for (uint64_t waited = 0; !operation_log_ready(&published->log); waited += 10) {
        if (waited >= OWNER_WAIT_MS) {
            printf("fs: the owner never published its log: every request goes to it\n");
            return NULL;
        }
        sleep_ms(10);
    }
    return published;
}

static void install_device(struct fs_server *server)
{
    blk_device = &server->device;
    replica_fs = &server->fs;
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
    const struct fs_published *published = open_published(server);
    long error = block_client_open(&server->device);
    if (error == 0 && !server->lend_off)
        block_pins_open(server->instance.count); /* none with fs_lend_on=off: no borrows */
    if (error == 0)
        error = ext2_mount(&server->fs, &server->device);
    if (error != 0 || published == NULL) {
        server->mounted = false;
        return error != 0 ? error : -E_NOT_FOUND;
    }
    server->fs.read_only = true;
    server->fs.read_only_reason = "a replica: changes go to the owner";
    install_device(server);
    operation_log_reader_init(&reader, &published->log, server->fs.block_size, forget_block,
                              forget_everything, NULL);
    operation_log_catch_up(&reader);
    read_pause_option();
    /* A replica opens and closes nothing (the owner does): it copies. */
    owner_handles = &published->handles;
    open_files_init(&handles);
    server->open_files = &handles;
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

/* The handle a request the replica serves names, if any. */
static bool handle_of(const struct ica_control *page, uint64_t *handle)
{
    struct ica_control *request = (struct ica_control *)page; /* the accessors take it so */
    switch (page->operation) {
    case FS_READ:
        *handle = fs_read_of(request)->handle;
        return true;
    case FS_READBLOCK:
        *handle = fs_readblock_of(request)->handle;
        return true;
    case FS_READDIR:
        *handle = fs_readdir_of(request)->handle;
        return true;
    case FS_STAT:
        *handle = fs_stat_of(request)->handle;
        return page->payload[0] == '\0';
    }
    return false;
}

/* The owner's slot `handle` names, copied whole into the replica's table
 * (or found not to be `origin`'s: the copy then names nobody). */
static void copy_handle(uint32_t origin, uint64_t handle)
{
    uint64_t slot = handle & ((1u << OPEN_FILE_SLOT_BITS) - 1);
    if (slot >= OPEN_FILES_MAX)
        return; /* names no slot: refused by the handler's look-up */
    struct open_file whole;
    if (open_files_mirror_find(owner_handles, origin, handle, &whole))
        handles.slots[slot] = whole;
    else
        handles.slots[slot].owner = 0;
    handles.in_use = owner_handles->in_use;
}

enum fs_route fs_replica_route(struct fs_server *server, const struct ica_control *page)
{
    if (server->replica == NULL)
        return FS_ROUTE_FORWARD; /* no log: nothing here can be trusted to be current */
    switch (page->operation) {
    case FS_READ:
    case FS_READBLOCK:
    case FS_STAT:
    case FS_READDIR: {
        uint64_t handle;
        if (handle_of(page, &handle))
            copy_handle(page->origin, handle);
        return FS_ROUTE_SERVE;
    }
    }
    return FS_ROUTE_FORWARD;
}
