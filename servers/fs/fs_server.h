/* fs_server.h: the FS server's state and its request handlers (one file per
 * group: files, names, readblock); dispatch.c picks the handler. */
#pragma once
#include "ext2.h"
#include <formica/ica.h>
#include <stdbool.h>
#include <stdint.h>

/* A handler's result that means "rewritten for BLK: forward it there
 * instead of returning it" (the serve loop forwards and receives in one call). */
#define FS_FORWARDED INT64_MIN

struct fs_server {
    struct ext2_device device;
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
/* Rewrites the request for BLK (FS_FORWARDED) or answers itself (holes, end of file). */
long fs_readblock(struct fs_server *server, uint64_t control);
/* The forward to BLK was refused: the request is `operation` again (and FS
 * forgets a block copy a BLK_PATCH would have changed); the error. */
long fs_not_forwarded(struct ica_control *page, uint32_t operation, long error);
/* FS_WRITE with the bytes in the payload: a BLK_PATCH (FS_FORWARDED) when
 * they overwrite one existing block, else -E_NEEDS_DATA (small_write.c). */
long fs_small_write(struct fs_server *server, uint64_t control);
/* Stamps the times owed by small writes; before anything that shows them. */
void fs_times_flush(struct fs_server *server);
