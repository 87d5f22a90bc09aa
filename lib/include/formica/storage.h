/* storage.h: what the storage servers' requests share: FS (files and
 * directories on ext2), BLK (the file cache) and DK (the disk driver). Their
 * operations and typed messages are declared in protocol/{fs,blk,dk}.messages
 * (generated into formica/protocol/, listed in docs/protocol.md).
 *
 * Rules common to every operation (docs/storage.md):
 * - "the data ICA" is the first attached one (ica_control.data[0]); the
 *   servers hand it back with the result, never keep it. A length that does
 *   not fit in it, or a missing one, gives -E_INVALID.
 * - A path is NUL-terminated inside the payload (ICA_PAYLOAD_BYTES), else
 *   -E_INVALID. An unknown operation gives -E_INVALID.
 * - result >= 0 is the declared value, < 0 an -E_* code. */
#pragma once
#include <formica/protocol/blk.h>
#include <formica/protocol/dk.h>
#include <formica/protocol/fs.h>
#include <stdint.h>
#define STORAGE_BLOCK_BYTES 4096u /* BLK's cache unit and readblock's block */
#define STORAGE_SECTOR_BYTES 512u
#define STORAGE_SECTORS_PER_BLOCK (STORAGE_BLOCK_BYTES / STORAGE_SECTOR_BYTES)
/* Most bytes of an FS_WRITE carried in the control ICA's payload. */
#define FS_INLINE_WRITE_BYTES 256u
/* Most blocks in one FS_READBLOCK / BLK_READ / BLK_WRITE: a full data ICA. */
#define STORAGE_MAX_BLOCKS 256u

#define FS_DEFAULT_FILE_MODE 0644u
#define FS_DEFAULT_DIRECTORY_MODE 0755u

#define FS_OPEN_CREATE 1u
#define FS_OPEN_TRUNCATE 2u
#define FS_OPEN_DIRECTORY 4u /* fail unless it is a directory */
#define FS_OPEN_READ 8u      /* the handle may read (neither READ nor WRITE: read only) */
#define FS_OPEN_WRITE 16u    /* the handle may write and truncate (not a directory) */
#define FS_OPEN_KNOWN_FLAGS 31u

/* The tag of the operations protocol/fs.messages declares `tagged` (FS_OPEN,
 * FS_UNLINK, FS_MKDIR, FS_RMDIR, FS_RENAME, FS_CLOSE: fs_operation_is_tagged,
 * generated): the client's request number, with this bit when the request is
 * sent again after FS ended without answering it (docs/recovery.md). The
 * generator makes it the first word of each of their messages, so the client
 * and FS read it the same way. */
#define FS_TAG_RESENT (1ull << 63)

struct fs_dirent {
    uint32_t inode;
    uint32_t type; /* 1 file, 2 directory, 0 other */
    char name[256];
};

/* BLK_READ / BLK_WRITE flags (struct blk_read_message.flags). */
#define BLK_BLOCK_LIST                                                                             \
    1u /* the blocks are not consecutive: their uint32_t disk block                                \
          numbers are in the payload, first_block is ignored */
#define BLK_LEND                                                                                   \
    2u /* BLK_READ of at most ICA_MAX_ATTACHED blocks: lend the cached                             \
          blocks themselves, read-only (ica_control.lent, in block order),                         \
          instead of copying them into the data ICA: zero copy. Blocks                             \
          BLK cannot lend are copied as without the flag (lent_count 0); with                      \
          no data ICA they get -E_NEEDS_DATA instead. */
#define BLK_AS_OF                                                                                  \
    4u /* BLK_READ by an FS replica: its view of the file system is the                            \
          owner's operation log up to `as_of`, taken while `as_of_shard`                           \
          was this shard's pid; a block FS freed after that view (BLK_RETIRE),                     \
          or another shard process, gives -E_STALE (docs/storage.md) */

/* BLK_RETIRE flags (struct blk_retire_message.flags) and sequences. */
#define BLK_RETIRE_ALL 1u  /* every block: each lent one retired (an FS owner's start) */
#define BLK_RETIRE_SEAL 2u /* earlier retires sent with BLK_RETIRE_UNSEALED take `sequence` */
#define BLK_RETIRE_UNSEALED                                                                        \
    UINT64_MAX /* retired as of a sequence not known yet: no view is new enough */
