/* fs_publisher.c: the FS owner's operation log (operation_log.h) in its
 * published region: the device the ext2 library writes through is wrapped,
 * so that each block written is published (its image while the journal's
 * running transaction holds it, its record always) before the request that
 * wrote it is answered, a whole request's records at once (replicas never
 * see part of one); a BLK_PATCH is published before it is forwarded, and
 * every data write is marked before it reaches BLK. */
#include "fs_published.h"
#include "fs_server.h"
#include "journal.h"
#include "open_files_mirror.h"
#include <formica/errors.h>
#include <formica/protocol/fs.h>
#include <formica/published_region.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>

static struct operation_log_writer writer;
static struct open_files *mirror;            /* the open-file table's copy in the region */
static struct ext2_device publishing_device; /* what the library writes through */
static struct ext2_device *inner;            /* the journal's device, or BLK's on ext2 */

static bool journal_holds_block(void *context, uint32_t block)
{
    const struct fs_server *server = context;
    return server->journal != NULL && journal_holds(server->journal, block);
}

static struct fs_server *publishing_server;

/* Whether a write of a block may put part of the request under way into
 * BLK before the request is done: ext2's metadata goes home at once, and
 * on ext3 a full transaction commits (journal_device.c's forced commit).
 * Then replicas whose views are older read no metadata from BLK until the
 * request's records are visible (operation_log_note_unfinished). */
static void note_if_blk_gets_part(bool metadata)
{
    const struct journal *journal = publishing_server->journal;
    bool home_now = journal == NULL
                        ? metadata
                        : journal->transaction_blocks >= journal_transaction_limit(journal);
    if (home_now)
        operation_log_note_unfinished(&writer);
}

/* Publishes a block written. Every image slot held by the running
 * transaction (more blocks than a transaction holds: it does not happen)
 * would leave a block BLK does not have without an image: the transaction
 * commits first (its blocks go home), then the block is published again. */
static void publish(uint32_t block, enum operation_kind kind, const void *bytes)
{
    int error = operation_log_publish(&writer, block, kind, bytes);
    if (error == 0)
        return;
    struct journal *journal = publishing_server->journal;
    if (journal != NULL)
        operation_log_note_unfinished(&writer); /* the commit takes part of this request home */
    int committed = journal != NULL ? journal_commit(journal) : error;
    if (committed == 0)
        error = operation_log_publish(&writer, block, kind, bytes);
    if (error != 0)
        printf("fs: block %u published without its image: %s\n", block, error_text(error));
}

static int read_bytes(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    (void)context;
    return inner->read_bytes(inner->context, block, offset, buffer, length);
}

/* An inode table block as it was before the write (ext2 blocks are at
 * most 4 KiB): a change of times alone is published as such. */
static uint8_t inode_block_before[STORAGE_BLOCK_BYTES];

/* What a metadata block's write changed: OPERATION_TIMES when it was an
 * inode table block whose inodes kept all but their times (replicas keep
 * their block maps), else OPERATION_METADATA. Asked before the write. */
static bool times_only_ahead(uint64_t block)
{
    const struct ext2_fs *fs = &publishing_server->fs;
    return fs->block_size <= sizeof inode_block_before &&
           ext2_is_inode_table_block(fs, (uint32_t)block) &&
           inner->read_bytes(inner->context, block, 0, inode_block_before, fs->block_size) == 0;
}

static int write_block(void *context, uint64_t block, const void *buffer)
{
    (void)context;
    bool compare = times_only_ahead(block);
    note_if_blk_gets_part(true);
    int status = inner->write_block(inner->context, block, buffer);
    if (status != 0)
        return status;
    bool times = compare && ext2_only_inode_times_changed(&publishing_server->fs, (uint32_t)block,
                                                          inode_block_before, buffer);
    publish((uint32_t)block, times ? OPERATION_TIMES : OPERATION_METADATA, buffer);
    return status;
}

/* A file's data block: marked first (replicas whose views are older do not
 * use what they read of it from BLK, which may be newer than the size and
 * map they have), whether it goes home at once or through the journal. */
static int write_data(void *context, uint64_t block, const void *buffer)
{
    (void)context;
    operation_log_note_data_write(&writer, (uint32_t)block);
    note_if_blk_gets_part(false); /* data is logged when its block was freed in this transaction */
    int status = inner->write_data != NULL ? inner->write_data(inner->context, block, buffer)
                                           : inner->write_block(inner->context, block, buffer);
    if (status == 0)
        publish((uint32_t)block, OPERATION_DATA, buffer);
    return status;
}

/* A freed block: said so in the log before it can be handed out again (a
 * replica's view older than that must not read it: docs/storage.md, "FS
 * replicas"), then the devices below are told. */
static void forget(void *context, uint64_t block)
{
    (void)context;
    operation_log_note_freed(&writer, (uint32_t)block);
    if (inner->forget != NULL)
        inner->forget(inner->context, block);
}

static bool may_allocate(void *context, uint64_t block)
{
    (void)context;
    return inner->may_allocate == NULL || inner->may_allocate(inner->context, block);
}

/* A slot of the owner's open-file table changed: copied before the answer. */
static void mirror_slot(const struct open_files *table, uint32_t slot)
{
    open_files_mirror_slot(mirror, table, slot);
}

/* The library's device becomes publishing_device, over the one it had. */
static void wrap_device(struct fs_server *server)
{
    inner = server->fs.device;
    publishing_device = (struct ext2_device){
        .context = &publishing_device,
        .block_size = inner->block_size,
        .read_bytes = read_bytes,
        .write_block = write_block,
        .write_data = write_data,
        .forget = forget,
        .may_allocate = may_allocate,
        .report_problem = inner->report_problem,
        .report_context = inner->report_context,
    };
    server->fs.device = &publishing_device;
}

long fs_publisher_start(struct fs_server *server)
{
    long address = system_call_published_region(SERVER_NAME_FS, FS_PUBLISHED_BYTES);
    if (address < 0) {
        printf("fs: no published region (%s): the replicas forward every request\n",
               error_text(address));
        return address;
    }
    publishing_server = server;
    struct fs_published *published = (struct fs_published *)address;
    struct operation_log *log = &published->log;
    mirror = &published->handles;
    open_files_mirror_all(mirror, server->open_files);
    open_files_slot_changed = mirror_slot;
    operation_log_writer_start(&writer, log, server->fs.block_size, journal_holds_block, server);
    if (server->mounted)
        wrap_device(server);
    server->publisher = &writer;
    printf("fs: owner of %u instances: operation log published (owner start %lu)\n",
           server->instance.count, (unsigned long)log->owner_starts);
    return 0;
}

uint64_t fs_publisher_sequence(const struct fs_server *server)
{
    if (server->publisher == NULL)
        return 0;
    return atomic_load_explicit(&server->publisher->log->tail, memory_order_acquire);
}

void fs_publish_patch(struct fs_server *server, uint32_t block)
{
    (void)server;
    operation_log_note_data_write(&writer, block); /* before BLK can have it */
    publish(block, OPERATION_DATA, NULL);
    operation_log_make_visible(&writer); /* a small write settles: no end of request publishes it */
}

bool fs_publisher_has_unseen(const struct fs_server *server)
{
    return server->publisher != NULL && operation_log_has_unseen(server->publisher);
}

void fs_publisher_make_visible(struct fs_server *server)
{
    if (server->publisher != NULL)
        operation_log_make_visible(server->publisher);
}
