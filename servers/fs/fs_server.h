/* fs_server.h: the FS server's state and its request handlers (one file per
 * group: files, names, readblock); dispatch.c picks the handler. */
#pragma once
#include "ext2.h"
#include "open_files.h"
#include "kept_state.h"
#include <formica/protocol/fs_dispatch.h>
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
    long blk_pid;
    bool mounted;
    long unmounted_error;           /* every request's result while not mounted */
    struct open_files *open_files;  /* who holds which handle (open_files.h) */
    uint64_t dead_clients_check_us; /* when dead_clients.c last looked */
    struct fs_kept_state *kept;     /* state kept across restarts, or NULL (kept_state.h) */
    bool kept_complete;             /* the kept state holds every change the last FS made */
    uint64_t requests;              /* answered so far (the fs_end_after test option) */
    uint64_t end_after;             /* test option fs_end_after=N: end before answering the Nth */
};

/* Logs a malformed request and gives -E_INVALID. */
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
/* A new handle of the requester on `inode` (open flags FS_OPEN_*, its mode). */
long fs_handle_new(struct fs_server *server, const struct ica_control *page, uint32_t inode,
                   uint32_t open_flags, uint32_t mode, uint64_t *handle);
/* Refuses (logged) open flags that are unknown or contradict each other, and
 * an open when the requester has no room for one more handle: -E_INVALID or
 * -E_BUSY, else 0. */
long fs_check_open(struct fs_server *server, const struct ica_control *page, uint32_t flags);
/* Refuses (logged) a byte range whose end overflows (-E_INVALID) or lies
 * past the largest file (-E_TOO_BIG). */
long fs_check_range(struct fs_server *server, const struct ica_control *page, uint64_t offset,
                    uint64_t length);
/* Frees an unlinked file's inode at its last close (context: the server). */
void fs_release_unlinked(void *context, uint32_t inode);

/* dead_clients.c: closes the handles of processes that have ended; every
 * few seconds from the request loop, at once when handles run short or
 * before a sync. */
void fs_close_dead_clients(struct fs_server *server);
void fs_close_dead_clients_if_due(struct fs_server *server, uint64_t now_us);

/* Checks the operation and the mount, then calls the operation's handler
 * (each declared in formica/protocol/fs_dispatch.h, from protocol/fs.messages). */
/* fs_journal.c: mount (ext2 or ext3), commits, sync and fsync. */
long fs_journal_mount(struct fs_server *server, struct fs_kept *kept);
/* The next request; a transaction that falls due meanwhile commits
 * (update_time first, so its age is read on a current clock). */
long fs_journal_receive(struct fs_server *server, void (*update_time)(void));
/* After a request: a due transaction commits, then the receive flags
 * (ICA_TIMEOUT or 0) and *timeout_ms that wake FS when the running one is
 * due, for a receive combined with a return or forward. */
uint32_t fs_journal_settle(struct fs_server *server, uint64_t *timeout_ms);
/* Everything written so far on the disk (ext3: committed and checkpointed). */
long fs_journal_sync(struct fs_server *server);
/* The running transaction committed (ext2: the whole cache written). */
long fs_journal_fsync(struct fs_server *server);
/* True when one of the blocks' newest contents is still in the journal. */
bool fs_journal_holds(const struct fs_server *server, const uint32_t *blocks, uint32_t count);
long fs_answer(struct fs_server *server, uint64_t control);

/* resent_requests.c: a request sent again after a restart (FS_TAG_RESENT):
 * *answered with its kept answer or -E_SERVER_ENDED, else to be done. */
long fs_answer_resent(struct fs_server *server, uint64_t control, bool *answered);
/* Before the answer: the kept copy of the request's changes and answer. */
void fs_keep_request(struct fs_server *server, uint64_t control, long result, bool replayed);
/* The forward to BLK was refused: the request is `operation` again (and FS
 * forgets a block copy a BLK_PATCH would have changed); the error. */
long fs_not_forwarded(struct ica_control *page, uint32_t operation, long error);
/* FS_WRITE with the bytes in the payload, on the requester's open `file`
 * (checked for writing): a BLK_PATCH (FS_FORWARDED) when they overwrite one
 * existing block outside the running journal transaction, else
 * -E_NEEDS_DATA (small_write.c). */
long fs_small_write(struct fs_server *server, uint64_t control, const struct open_file *file,
                    const struct fs_write_message *message);
/* Stamps the times owed by small writes; before anything that shows them. */
void fs_times_flush(struct fs_server *server);
