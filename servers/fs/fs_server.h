/* fs_server.h: the FS server's state and its request handlers (one file per
 * group: files, names, readblock); dispatch.c picks the handler. */
#pragma once
#include "ext2.h"
#include <formica/ica.h>
#include <stdbool.h>
#include <stdint.h>

/* A handler's result that means "forwarded: do not return the ICA". */
#define FS_FORWARDED INT64_MIN

struct journal;

struct fs_server {
    struct ext2_device device;
    struct journal *journal; /* ext3: the journal the library writes through; NULL on ext2 */
    struct ext2_fs fs;
    long blk_pid;
    bool mounted;
    long unmounted_error; /* every request's result while not mounted */
};

/* Logs a malformed request and gives -E_INVALID. */
long fs_refuse(const struct ica_control *page, const char *why);
/* The payload's path, or NULL (logged) when it is not NUL-terminated. */
const char *fs_payload_path(const struct ica_control *page);
/* True when data ICA 0 exists and holds `bytes` (logged if not). */
bool fs_data_fits(const struct ica_control *page, uint64_t bytes);

long fs_answer(struct fs_server *server, uint64_t control);
long fs_read(struct fs_server *server, struct ica_control *page);
long fs_write(struct fs_server *server, struct ica_control *page);
long fs_truncate(struct fs_server *server, struct ica_control *page);
long fs_stat(struct fs_server *server, struct ica_control *page);
long fs_open(struct fs_server *server, struct ica_control *page);
long fs_mkdir(struct fs_server *server, struct ica_control *page);
long fs_unlink(struct fs_server *server, struct ica_control *page);
long fs_rmdir(struct fs_server *server, struct ica_control *page);
long fs_rename(struct fs_server *server, struct ica_control *page);
long fs_readdir(struct fs_server *server, struct ica_control *page);
/* fs_journal.c: mount (ext2 or ext3), commits, sync and fsync. */
long fs_journal_mount(struct fs_server *server);
long fs_journal_receive(struct fs_server *server, void (*update_time)(void));
void fs_journal_after_request(struct fs_server *server);
long fs_sync(struct fs_server *server);
long fs_fsync(struct fs_server *server, struct ica_control *page);
/* True when one of the blocks' newest contents is still in the journal. */
bool fs_journal_holds(const struct fs_server *server, const uint32_t *blocks, uint32_t count);
/* Forwards to BLK (FS_FORWARDED) or answers itself (holes, end of file). */
long fs_readblock(struct fs_server *server, uint64_t control);
