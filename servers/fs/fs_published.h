/* fs_published.h: what FS's owner publishes for its replicas in its
 * published region (formica/published_region.h): the operation log and
 * the mirror of its open-file table (docs/storage.md, "FS replicas"). */
#pragma once
#include "open_files.h"
#include "operation_log.h"

struct fs_published {
    struct operation_log log;
    struct open_files handles; /* open_files_mirror.h */
};

/* The published region's size (whole pages). */
#define FS_PUBLISHED_BYTES ((sizeof(struct fs_published) + 4095) & ~(uint64_t)4095)
