/* memory_disk.h: the in-memory disk under the cache in BLK's host tests
 * (the context and calls of a struct cache_disk): its bytes, what was read,
 * written and flushed, and the errors and the crash a test asks for. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "cache.h"

#define MEMORY_DISK_LOGGED_WRITES 4096u /* the first writes whose runs are kept */

struct memory_disk {
    uint8_t (*bytes)[CACHE_BLOCK_BYTES]; /* the test's blocks */
    uint64_t blocks;                     /* what the disk says it holds */
    unsigned reads, writes, blocks_written;
    unsigned flushes, writes_at_flush; /* barriers, and the writes before the last one */
    bool fail_reads, fail_writes;      /* every read, or write, fails with -E_IO */
    const bool *stopped;               /* a crash model's: writes after a crash never happen */
    uint64_t write_first[MEMORY_DISK_LOGGED_WRITES]; /* each write's run */
    uint32_t write_count[MEMORY_DISK_LOGGED_WRITES];
};

/* A fresh disk of `blocks` zeroed blocks at `bytes`: no counts, no errors. */
void memory_disk_reset(struct memory_disk *disk, uint8_t (*bytes)[CACHE_BLOCK_BYTES],
                       uint64_t blocks);

/* struct cache_disk's calls; `context` is the struct memory_disk. */
int memory_disk_read(void *context, uint64_t first, uint32_t count, uint8_t *const *buffers);
int memory_disk_write(void *context, uint64_t first, uint32_t count, const uint8_t *const *buffers);
int memory_disk_flush(void *context);
