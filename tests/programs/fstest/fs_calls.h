/* fs_calls.h: fstest's raw storage requests: one control ICA and one data
 * ICA, filled by hand as formica/storage.h says, sent synchronously. */
#pragma once
#include <formica/blk_shards.h>
#include <formica/ica.h>
#include <stdbool.h>
#include <stdint.h>

#define FSTEST_DATA_BYTES (64u * 1024)

struct fs_link {
    long fs;               /* FS's pid */
    struct blk_shards blk; /* BLK's shards (count 0 when BLK was not found) */
    uint64_t control;      /* our control ICA */
    uint64_t data;         /* our data ICA of FSTEST_DATA_BYTES */
};

/* Waits for FS (and BLK's shards if they are there) and allocates the
 * ICAs; 0 or an error. */
long fs_link_open(struct fs_link *link);
/* True when `pid` is one of BLK's shards. */
bool fs_link_is_blk(const struct fs_link *link, long pid);
/* A fresh request: operation, empty payload, no data ICA. */
struct ica_control *fs_prepare(struct fs_link *link, uint32_t operation);
void fs_set_path(struct ica_control *page, const char *path);
/* Sends the prepared request to `server` and waits; the result. */
long fs_send(struct fs_link *link, long server);
/* Prepared, with the data ICA attached. */
struct ica_control *fs_prepare_with_data(struct fs_link *link, uint32_t operation);
uint8_t *fs_data(const struct fs_link *link);

/* FS_OPEN's result: a handle of this process, or an error. */
long fs_open_path(struct fs_link *link, const char *path, uint32_t flags);
long fs_close_handle(struct fs_link *link, uint64_t handle);
long fs_read_at(struct fs_link *link, uint64_t handle, uint64_t offset, uint64_t length);
long fs_write_at(struct fs_link *link, uint64_t handle, uint64_t offset, uint64_t length);
long fs_path_call(struct fs_link *link, uint32_t operation, const char *path);
long fs_stat_path(struct fs_link *link, const char *path, uint64_t *size);
/* FS_STAT by handle: the result; *links gets the link count. */
long fs_stat_handle(struct fs_link *link, uint64_t handle, uint32_t *links);
long fs_readblock(struct fs_link *link, uint64_t handle, uint64_t first, uint64_t count);
