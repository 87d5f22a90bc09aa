/* freed_blocks.h: the disk blocks the FS owner frees, told to BLK
 * (BLK_RETIRE, to each block's shard) before any of them can be handed out
 * again, so that no page BLK or FS lent shows the blocks' next owner's
 * bytes and no replica's read as of an older view gets them
 * (docs/storage.md, "Freed blocks and lent pages"). */
#pragma once
#include "ext2.h"
#include <stdbool.h>
#include <stdint.h>

/* Disk blocks noted before they are told at once (BLK_RETIRE_UNSEALED,
 * sealed at the end of the request): a truncate of 12 MiB, or 48 MiB on
 * 4 KiB blocks, fits (3/4 of the set). */
#define FREED_BLOCKS_CAPACITY 4096u

/* Makes `device` (BLK's, under the journal on ext3) note each block the
 * ext2 library frees and refuse to hand one out until BLK was told. */
void freed_blocks_attach(struct ext2_device *device);
/* An owner that starts does not know what the last one freed without
 * telling: every block lent now is retired, as of a sequence not known yet
 * (freed_blocks_tell seals it). 0 or the first shard's error. */
long freed_blocks_retire_all(void);

/* Blocks noted, or shards told as of a sequence not known yet. */
extern uint32_t freed_blocks_untold;
/* Tells each shard its noted blocks as of `sequence` (the operation log's
 * tail, all of the request's records published; 0 without replicas),
 * sealing what it was told before. Before the request's answer and before
 * anything can allocate them: they are noted until then. 0, or the first
 * error (the blocks stay noted, and are told again after the next request). */
long freed_blocks_tell(uint64_t sequence);
