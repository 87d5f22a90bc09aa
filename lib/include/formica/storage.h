/* storage.h: the requests of the storage servers (seed 003 §3.2, Fig. 4),
 * carried in control ICAs (formica/ica.h): FS (files and directories on
 * ext2), BLK (the file cache) and DK (the disk driver). File data travels in
 * data ICAs; a path travels in the control ICA's payload.
 *
 * Rules common to every operation (docs/storage.md):
 * - "the data ICA" is the first attached one (ica_control.data[0]); the
 *   servers hand it back with the result, never keep it. A length that does
 *   not fit in it, or a missing one, gives -E_INVALID.
 * - A path is NUL-terminated inside the payload (ICA_PAYLOAD_BYTES), else
 *   -E_INVALID. An unknown operation gives -E_INVALID.
 * - result >= 0 is the value given below, < 0 an -E_* code.
 *
 * Changes since the first version (commit 112188f), all compatible:
 * FS_OPEN and FS_MKDIR take a mode; FS_READBLOCK's units and limits are
 * fixed; BLK_READ/BLK_WRITE may carry a list of disk blocks in the payload
 * (BLK_BLOCK_LIST); BLK_STATS fills more counters. */
#pragma once
#include <stdint.h>

#define SERVER_NAME_FS "fs"
#define SERVER_NAME_BLK "blk"
#define SERVER_NAME_DK "dk"

#define STORAGE_BLOCK_BYTES 4096u /* BLK's cache unit and readblock's block */
#define STORAGE_SECTOR_BYTES 512u
#define STORAGE_SECTORS_PER_BLOCK (STORAGE_BLOCK_BYTES / STORAGE_SECTOR_BYTES)
/* Most bytes of an FS_WRITE carried in the control ICA's payload. */
#define FS_INLINE_WRITE_BYTES 256u
/* Most blocks in one FS_READBLOCK / BLK_READ / BLK_WRITE: a full data ICA. */
#define STORAGE_MAX_BLOCKS 256u

#define FS_DEFAULT_FILE_MODE 0644u
#define FS_DEFAULT_DIRECTORY_MODE 0755u

/* FS requests (server "fs"). Arguments by index into ica_control.argument. */
enum fs_operation {
    FS_OPEN = 1,  /* payload: path; [0] = FS_OPEN_* flags, [3] = permission bits for a
                     new file (0: FS_DEFAULT_FILE_MODE) -> result: inode;
                     [1] <- size, [2] <- mode */
    FS_READ,      /* [0] inode, [1] offset, [2] length; data ICA attached -> bytes read
                     (short at the end of the file, 0 past it; holes read as zeros) */
    FS_WRITE,     /* [0] inode, [1] offset, [2] length; data ICA attached -> bytes written.
                     Without one, up to FS_INLINE_WRITE_BYTES in the payload: overwriting
                     one existing block, BLK writes them and answers (as a readblock);
                     otherwise -E_NEEDS_DATA, and a data ICA is needed */
    FS_READBLOCK, /* [0] inode, [1] first block of the file (STORAGE_BLOCK_BYTES units),
                     [2] blocks (1..STORAGE_MAX_BLOCKS); data ICA attached -> bytes
                     (short at the end of the file). FS turns it into a BLK_READ of the
                     disk blocks and forwards it: BLK returns it to the requester directly.
                     Holes, the file's end and 1 KiB-block file systems are answered by FS
                     itself, as FS_READ of blocks * STORAGE_BLOCK_BYTES bytes would be.
                     Without a data ICA (at most ICA_MAX_ATTACHED blocks) only lent blocks
                     can answer: what FS or BLK would have to copy gets -E_NEEDS_DATA. */
    FS_STAT,      /* payload: path, or [0] inode when the payload is empty -> 0;
                     [1] <- size, [2] <- mode, [3] <- links, [4] <- blocks, [5] <- inode */
    FS_TRUNCATE,  /* [0] inode, [1] size -> 0 */
    FS_UNLINK,    /* payload: path -> 0 */
    FS_MKDIR,     /* payload: path; [0] permission bits (0: FS_DEFAULT_DIRECTORY_MODE)
                     -> inode */
    FS_RMDIR,     /* payload: path -> 0 */
    FS_RENAME,    /* payload: old path, NUL, new path, NUL -> 0 */
    FS_READDIR,   /* [0] inode, [1] cursor -> 1 (entry in payload: struct fs_dirent,
                     [1] <- next cursor) or 0 at the end */
    FS_SYNC,      /* -> 0 once everything written so far is on the disk */
};

#define FS_OPEN_CREATE 1u
#define FS_OPEN_TRUNCATE 2u
#define FS_OPEN_DIRECTORY 4u /* fail unless it is a directory */

struct fs_dirent {
    uint32_t inode;
    uint32_t type; /* 1 file, 2 directory, 0 other */
    char name[256];
};

/* BLK requests (server "blk"). Blocks are STORAGE_BLOCK_BYTES on the disk;
 * block n is sectors n * 8 .. n * 8 + 7 (one disk, so no device number). */
enum blk_operation {
    BLK_READ = 32, /* [0] disk block, [1] blocks (1..STORAGE_MAX_BLOCKS), [2] flags;
                      data ICA attached -> bytes; block i goes to offset i * 4096 */
    BLK_WRITE,     /* the same arguments; the blocks are cached dirty -> bytes */
    BLK_SYNC,      /* -> 0 once every dirty block is on the disk */
    BLK_STATS,     /* -> 0; [0] <- hits, [1] <- misses, [2] <- dirty, [3] <- cached blocks,
                      [4] <- capacity in blocks, [5] <- blocks read ahead,
                      [6] <- blocks written back, [7] <- evictions */
    BLK_PATCH,     /* [0] disk block, [1] offset in it, [2] length (1..FS_INLINE_WRITE_BYTES,
                      inside the block); the bytes in the payload; the block is cached
                      dirty -> length */
};

/* BLK_READ / BLK_WRITE flags ([2]). */
#define BLK_BLOCK_LIST                                                                             \
    1u /* the blocks are not consecutive: [1] uint32_t disk block                                  \
          numbers are in the payload, [0] is ignored */
#define BLK_LEND                                                                                   \
    2u /* BLK_READ of at most ICA_MAX_ATTACHED blocks: lend the cached                             \
          blocks themselves, read-only (ica_control.lent, in block order),                         \
          instead of copying them into the data ICA: zero copy. Blocks                             \
          BLK cannot lend are copied as without the flag (lent_count 0); with                      \
          no data ICA they get -E_NEEDS_DATA instead. */

/* DK requests (server "dk"). */
enum dk_operation {
    DK_READ = 64, /* [0] first sector, [1] sectors; data ICA attached -> bytes
                     (-E_INVALID outside the disk, -E_IO on a device error) */
    DK_WRITE,     /* [0] first sector, [1] sectors; data ICA attached -> bytes */
    DK_INFO,      /* -> 0; [0] <- sectors on the disk, [1] <- sector bytes */
};
