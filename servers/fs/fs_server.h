/* fs_server.h: the FS server's state and its request handlers (one file per
 * group: files, names, readblock, the whole file system); fs_dispatch,
 * generated from protocol/fs.messages, picks the handler. */
#pragma once
#include "block_map_cache.h"
#include "ext2.h"
#include "ext2_public_map.h"
#include "open_files.h"
#include "kept_state.h"
#include "operation_log.h"
#include <formica/instance.h>
#include <formica/protocol/fs_dispatch.h>
#include <formica/storage.h>
#include <stdbool.h>
#include <stdint.h>

/* A handler's result that means "rewritten for BLK: forward it there
 * instead of returning it" (the serve loop forwards and receives in one call). */
#define FS_FORWARDED INT64_MIN

struct journal;

struct fs_server {
    struct ext2_device device;
    struct journal *journal; /* ext3: the journal the library writes through; NULL on ext2 */
    struct ext2_fs fs;
    uint32_t forward_shard; /* the BLK shard an FS_FORWARDED request goes to (0 with one BLK) */
    bool mounted;
    long unmounted_error;           /* every request's result while not mounted */
    struct open_files *open_files;  /* who holds which handle (open_files.h) */
    uint64_t dead_clients_check_us; /* when dead_clients.c last looked */
    struct fs_kept_state *kept;     /* state kept across restarts, or NULL (kept_state.h) */
    bool kept_complete;             /* the kept state holds every change the last FS made */
    uint64_t requests;              /* answered so far (the fs_end_after test option) */
    uint64_t end_after;             /* test option fs_end_after=N: end before answering the Nth */
    bool end_on_stat;       /* test option fs_end_on_stat=1: end before any FS_STAT's answer */
    bool end_asked;         /* either option is set: the serve loop's one test */
    uint64_t problems_seen; /* fs.problems when FS last looked (fs_problems.c) */
    bool read_only_told;    /* the switch to read-only was logged */
    bool lend_off;          /* boot option fs_lend_on=off: every readblock goes to BLK */
    /* Instances (docs/storage.md, "FS replicas"): instance 0, the owner,
     * changes the file system and publishes its operation log when it has
     * replicas; instance i > 0, a replica, reads through the log. */
    struct server_instance instance;
    struct operation_log_writer *publisher; /* the owner's log, or NULL (no replicas) */
    struct operation_log_reader *replica;   /* a replica's view of it, else NULL */
    long owner_pid;                         /* a replica: where it forwards requests */
};

/* fs_publisher.c: the owner's side. Maps the published region and starts
 * the log; from then on every block the library writes is published before
 * the request that wrote it is answered. 0 or an error (logged). */
long fs_publisher_start(struct fs_server *server);
/* A BLK_PATCH of disk block `block` is on its way: published first (the
 * caller asks only when server->publisher is set). */
void fs_publish_patch(struct fs_server *server, uint32_t block);
/* The log's sequence now (its tail: every record so far published), the
 * one BLK_RETIRE names; 0 without replicas. */
uint64_t fs_publisher_sequence(const struct fs_server *server);
/* Records of this request that replicas do not see yet, and making them
 * visible, all at once, when it is done (before its answer and before
 * BLK_RETIRE's sequence is taken). Every request that writes a block
 * through the publisher changes the journal (ext3) or runs unsettled
 * (ext2), so the serve loop asks only after those; a small write's patch
 * is made visible at once. */
bool fs_publisher_has_unseen(const struct fs_server *server);
void fs_publisher_make_visible(struct fs_server *server);

/* fs_replica.c: a replica's side. Maps the owner's log (read-only), waits
 * until the owner has taken it, and mounts the disk read-only, reading
 * through the log's images. 0 or an error (logged). */
long fs_replica_start(struct fs_server *server);
/* What a replica does with a request: FS_READ, FS_READBLOCK, FS_STAT and
 * FS_READDIR are answered here, everything else goes to the owner. */
enum fs_route {
    FS_ROUTE_SERVE,
    FS_ROUTE_FORWARD,
};
/* A replica's choice for the request; for one it serves, the owner's slot
 * its handle names is copied whole into the replica's own table first
 * (server->open_files, where the handlers look: open_files_mirror.h). */
enum fs_route fs_replica_route(struct fs_server *server, const struct ica_control *page);
/* True when one of the blocks has an image in the owner's log (its newest
 * contents may not be in BLK yet). */
bool fs_replica_holds(const struct fs_server *server, const uint32_t *blocks, uint32_t count);
/* Before a request: what the owner published since is applied, and the
 * replica's reads of BLK are as of that view (block_client_view). */
void fs_replica_catch_up(struct fs_server *server);
/* How often a request BLK refused as stale (-E_STALE: the view was older
 * than a block it read) is answered again as of a new view; then the
 * client gets -E_STALE and asks the owner (lib/file_channel.c). */
#define FS_REPLICA_STALE_RETRIES 3u
/* The test option fs_replica_delay=MS: a request waits MS milliseconds
 * once, as of the view it took, before it reads a file's blocks (a
 * readblock after its catch-up, any other at its first read of a file's
 * contents or of a block past an inode: an indirect or directory block),
 * so a test can free and reuse the blocks meanwhile (docs/boot.md);
 * nothing without it. */
void fs_replica_pause(void);

/* fs_problems.c: the library's problems logged (attach before the mount),
 * (on the device, before the mount), a read-only mount said so, and after a request that found one:
 * the switch to read-only logged once, the error record committed, errors=panic's stop. */
void fs_problems_attach(struct ext2_device *device);
void fs_problems_report_mount(const struct fs_server *server);
void fs_problems_settle(struct fs_server *server);
/* Inline: after every request, one comparison. */
static inline void fs_problems_check(struct fs_server *server)
{
    if (server->fs.problems != server->problems_seen)
        fs_problems_settle(server);
}

/* request_checks.c: logs a malformed request and gives -E_INVALID. */
long fs_refuse(const struct ica_control *page, const char *why);
/* The payload's path, or NULL (logged) when it is not NUL-terminated. */
const char *fs_payload_path(const struct ica_control *page);
/* True when data ICA 0 exists and holds `bytes` (logged if not). */
bool fs_data_fits(const struct ica_control *page, uint64_t bytes);

/* open_file_requests.c: handles. Attaches the open-file table to the mounted
 * file system (its unlink hook). */
void fs_open_files_attach(struct fs_server *server, struct open_files *table, bool kept);
/* Logs why `file` (NULL: none) does not give `access`; -E_BAD_HANDLE. */
long fs_refuse_access(const struct ica_control *page, uint64_t handle, const struct open_file *file,
                      uint32_t access);
/* The requester's open file `handle` names, with `access` (OPEN_FILE_READ,
 * OPEN_FILE_WRITE or 0); NULL and *error = -E_BAD_HANDLE (logged) if not.
 * Inline: every request on a handle asks. */
static inline struct open_file *fs_handle_of(struct fs_server *server,
                                             const struct ica_control *page, uint64_t handle,
                                             uint32_t access, long *error)
{
    struct open_file *file = open_files_find(server->open_files, page->origin, handle);
    if (file != NULL && (access & (OPEN_FILE_READ | OPEN_FILE_WRITE) & ~file->flags) == 0)
        return file;
    *error = fs_refuse_access(page, handle, file, access);
    return NULL;
}
/* Logs a handle that names a directory where a regular file is wanted;
 * -E_IS_DIRECTORY. */
long fs_refuse_directory(const struct ica_control *page);
/* fs_handle_of for a regular file: a directory's handle is refused too.
 * Inline: every read and write asks. */
static inline struct open_file *fs_regular_file_of(struct fs_server *server,
                                                   const struct ica_control *page, uint64_t handle,
                                                   uint32_t access, long *error)
{
    struct open_file *file = fs_handle_of(server, page, handle, access, error);
    if (file != NULL && (file->flags & OPEN_FILE_DIRECTORY)) {
        *error = fs_refuse_directory(page);
        return NULL;
    }
    return file;
}
/* A new handle of the requester on `inode` (open flags FS_OPEN_*, its mode). */
long fs_handle_new(struct fs_server *server, const struct ica_control *page, uint32_t inode,
                   uint32_t open_flags, uint32_t mode, uint64_t *handle);
/* Refuses (logged) open flags that are unknown or contradict each other, and
 * an open when the requester has no room for one more handle: -E_INVALID,
 * -E_BUSY (its process's share or the table) or -E_QUOTA (its account's
 * share, open_files.h), else 0. The refusals for room are rate-limited. */
long fs_check_open(struct fs_server *server, const struct ica_control *page, uint32_t flags);
/* fs_check_range's refusals (logged): -E_INVALID or -E_TOO_BIG; 0 for a
 * range it accepts. */
long fs_refuse_range(struct fs_server *server, const struct ica_control *page, uint64_t offset,
                     uint64_t length);
/* Refuses (logged) a byte range whose end overflows (-E_INVALID) or lies
 * past the largest file (-E_TOO_BIG). Inline: a range within them is two
 * tests (fs_check_range_refuses); the refusals are apart. */
static inline bool fs_check_range_refuses(const struct fs_server *server, uint64_t offset,
                                          uint64_t length)
{
    return offset > UINT64_MAX - length || offset + length > ext2_max_file_bytes(&server->fs);
}
static inline long fs_check_range(struct fs_server *server, const struct ica_control *page,
                                  uint64_t offset, uint64_t length)
{
    if (!fs_check_range_refuses(server, offset, length))
        return 0;
    return fs_refuse_range(server, page, offset, length);
}
/* Frees an unlinked file's inode at its last close (context: the server). */
void fs_release_unlinked(void *context, uint32_t inode);

/* fs_quota.c: after the mount, each uid's blocks summed from the inode
 * table, the per-uid limit (kernel option fs_quota=PERCENT) set and the
 * library's quota hooks installed; logged. */
void fs_quota_start(struct fs_server *server);

/* dead_clients.c: closes the handles of processes that have ended; every
 * few seconds from the request loop, at once when handles run short or
 * before a sync. */
#define DEAD_CLIENTS_PERIOD_US 2000000u
void fs_close_dead_clients(struct fs_server *server);
/* Inline: per request, two tests. */
static inline void fs_close_dead_clients_if_due(struct fs_server *server, uint64_t now_us)
{
    if (server->open_files->in_use == 0 || server->replica != NULL)
        return; /* a replica's table is the owner's: the owner closes */
    if (now_us - server->dead_clients_check_us >= DEAD_CLIENTS_PERIOD_US)
        fs_close_dead_clients(server);
}

/* Checks the operation and the mount, then calls the operation's handler
 * (each declared in formica/protocol/fs_dispatch.h, from protocol/fs.messages). */
/* fs_journal.c: mount (ext2 or ext3), commits, sync and fsync. */
long fs_journal_mount(struct fs_server *server, struct fs_kept *kept);
/* The next request; a transaction that falls due meanwhile commits
 * (update_time first, so its age is read on a current clock). */
long fs_journal_receive(struct fs_server *server, void (*update_time)(void));
/* How FS waits for its next request (the receive's flags, ICA_TIMEOUT or
 * 0, and the timeout with ICA_TIMEOUT): returned in two registers. */
struct fs_wait {
    uint32_t flags;
    uint64_t timeout_ms;
};
/* The last outcome of fs_journal_settle that committed nothing: while the
 * transaction (journal->changes counts every change to its blocks, revokes
 * and commits) and the clock (fs->time) stay as they were, the outcome is
 * the same, so a run of reads asks nothing more. `changes` is
 * FS_SETTLED_NONE while there is no such outcome. */
#define FS_SETTLED_NONE UINT64_MAX
struct fs_settled {
    uint64_t changes;
    uint32_t time;
    struct fs_wait wait;
};
extern struct fs_settled fs_settled;
/* fs_journal_settle when fs_settled does not hold (fs_journal.c). It
 * remembers an outcome only while the kept copy holds the transaction as
 * it is (kept_transaction_copied_changes), so fs_settled also says that
 * nothing is left to keep. */
struct fs_wait fs_journal_settle_anew(struct fs_server *server);
/* True while fs_settled holds: the transaction and the clock are as the
 * last settle left them, and the kept copy holds that transaction: a
 * request in between changed nothing to keep or to settle. */
static inline bool fs_journal_settled(const struct fs_server *server)
{
    const struct journal *journal = server->journal;
    return journal != NULL && fs_settled.changes == journal->changes &&
           fs_settled.time == server->fs.time;
}
/* After a request: a due transaction commits, then how to wait for the
 * next request so that FS wakes when the running one is due, for a
 * receive combined with a return or forward. Inline: after a read, the
 * last outcome holds (three tests). */
static inline struct fs_wait fs_journal_settle(struct fs_server *server)
{
    if (server->journal == NULL)
        return (struct fs_wait){0}; /* ext2: no transaction runs */
    if (fs_journal_settled(server))
        return fs_settled.wait;
    return fs_journal_settle_anew(server);
}
/* Everything written so far on the disk (ext3: committed and checkpointed). */
long fs_journal_sync(struct fs_server *server);
/* The running transaction committed (ext2: the whole cache written). */
long fs_journal_fsync(struct fs_server *server);
/* True when one of the blocks' newest contents is still in the journal.
 * Inline: every readblock asks. */
static inline bool fs_journal_holds(const struct fs_server *server, const uint32_t *blocks,
                                    uint32_t count)
{
    if (server->journal == NULL)
        return server->replica != NULL && fs_replica_holds(server, blocks, count);
    if (server->journal->transaction_blocks == 0)
        return false;
    for (uint32_t i = 0; i < count; i++)
        if (journal_holds(server->journal, blocks[i]))
            return true;
    return false;
}
/* fs_journal_holds_remembered when the entry does not remember: asked,
 * and a block outside remembered (fs_journal.c). */
bool fs_journal_holds_anew(const struct fs_server *server, struct block_map_entry *entry);
/* fs_journal_holds of the one block a block map cache entry remembers. A
 * block found outside the running transaction is remembered so in the
 * entry while the journal's change count stays: the transaction gains and
 * loses blocks only with the count. Inline: every readblock and small
 * write asks; a block that stays outside is two loads and a comparison. */
static inline bool fs_journal_holds_remembered(const struct fs_server *server,
                                               struct block_map_entry *entry)
{
    const struct journal *journal = server->journal;
    if (journal == NULL) /* a replica asks the owner's log */
        return server->replica != NULL && fs_replica_holds(server, &entry->disk_block, 1);
    if (entry->outside_journal == journal->changes)
        return false;
    return fs_journal_holds_anew(server, entry);
}
/* FS_WRITE with the bytes in the payload (no data ICA), on the requester's
 * open regular file (checked for writing first, as fs_write checks): a
 * BLK_PATCH (FS_FORWARDED) when they overwrite one existing block outside
 * the running journal transaction, else -E_NEEDS_DATA (small_write.c). */
long fs_small_write(struct fs_server *server, uint64_t control,
                    const struct fs_write_message *message);
/* FS_WRITE with its bytes in the data ICA (file_requests.c). */
long fs_write_with_data(struct fs_server *server, struct ica_control *page,
                        const struct fs_write_message *message);
/* The request answered by its handler, or the mount's error. fs_dispatch is
 * generated from protocol/fs.messages: the operations declared `hot`
 * (FS_READBLOCK, FS_WRITE) are tested first, each with its right. */
static inline long fs_answer(struct fs_server *server, uint64_t control)
{
    if (server->mounted)
        return fs_dispatch(server, control);
    return server->unmounted_error;
}

/* Path requests and writes act for their sender: the ext2 library owns what
 * it creates to, checks permissions against, and lets only root take the
 * reserved blocks for, the kernel-stamped user of the request
 * (ext2_permission.c, ext2_quota.c). Reads on handles need not: the
 * handle's access was checked at FS_OPEN. */
static inline void fs_act_for_sender(struct fs_server *server, const struct ica_control *page)
{
    server->fs.user = (struct ext2_user){.uid = page->sender_uid, .gid = page->sender_gid};
}

/* resent_requests.c: a request with a tag answered and kept: sent again
 * after a restart (FS_TAG_RESENT), with its kept answer or -E_SERVER_ENDED
 * unless it is to be done; done, by fs_answer; then the kept copy of its
 * changes and its answer, before the answer goes. */
long fs_answer_tagged(struct fs_server *server, uint64_t control);
/* Before the answer of a request without a tag: the kept copy of its
 * changes. Inline: a request that changed nothing is a few tests (and
 * none when it left the journal settled: fs_journal_settled). */
static inline void fs_keep_changes(struct fs_server *server)
{
    if (server->kept != NULL)
        kept_transaction_save(&server->kept->fs, server->journal, NULL);
}
/* A readblock answered with a block FS borrows, whose lend on the kernel
 * refused with `error` (-E_SERVER_ENDED: its lender, a BLK shard, ended):
 * every borrowed block let go and the request rewritten for BLK as without
 * borrowing; FS_FORWARDED. Right after that answer: the mapping is still
 * readblock.c's. */
long fs_readblock_from_blk(struct fs_server *server, uint64_t control, long error);
/* The boot option fs_lend_on=off (docs/boot.md): FS opens no pins, so it
 * neither borrows BLK's blocks nor answers a readblock from them and every
 * readblock goes FS -> BLK as in seed 003 (the pins' own empty-table test,
 * no test of the option per readblock). Read at start; on by default. */
void fs_readblock_read_options(struct fs_server *server);
/* Stamps the times owed by small writes; before anything that shows them. */
void fs_times_flush(struct fs_server *server);
