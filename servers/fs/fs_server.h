/* fs_server.h: the FS server's state and its request handlers (one file per
 * group: files, names, readblock); dispatch.c picks the handler. */
#pragma once
#include "ext2.h"
#include "kept_state.h"
#include <formica/protocol/fs_dispatch.h>
#include <stdbool.h>
#include <stdint.h>

/* A handler's result that means "forwarded: do not return the ICA". */
#define FS_FORWARDED INT64_MIN

struct fs_server {
    struct ext2_device device;
    struct ext2_fs fs;
    long blk_pid;
    bool mounted;
    long unmounted_error;       /* every request's result while not mounted */
    struct fs_kept_state *kept; /* state kept across restarts, or NULL (kept_state.h) */
};

/* Logs a malformed request and gives -E_INVALID. */
long fs_refuse(const struct ica_control *page, const char *why);
/* The payload's path, or NULL (logged) when it is not NUL-terminated. */
const char *fs_payload_path(const struct ica_control *page);
/* True when data ICA 0 exists and holds `bytes` (logged if not). */
bool fs_data_fits(const struct ica_control *page, uint64_t bytes);

/* Checks the operation and the mount, then calls the operation's handler
 * (each declared in formica/protocol/fs_dispatch.h, from protocol/fs.messages). */
long fs_answer(struct fs_server *server, uint64_t control);
