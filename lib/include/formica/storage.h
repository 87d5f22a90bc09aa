/* storage.h: the requests of the storage servers (seed 003 §3.2, Fig. 4),
 * carried in control ICAs (formica/ica.h): FS (files and directories on
 * ext2), BLK (the file cache) and DK (the disk driver). File data travels in
 * data ICAs; a path travels in the control ICA's payload. */
#pragma once
#include <stdint.h>

#define SERVER_NAME_FS "fs"
#define SERVER_NAME_BLK "blk"
#define SERVER_NAME_DK "dk"

#define STORAGE_BLOCK_BYTES 4096u /* BLK's cache unit and readblock's block */
#define STORAGE_SECTOR_BYTES 512u

/* FS requests (server "fs"). Arguments by index into ica_control.argument. */
enum fs_operation {
    FS_OPEN = 1,     /* payload: path; [0] = FS_OPEN_* flags -> result: inode;
                        [1] <- size, [2] <- mode */
    FS_READ,         /* [0] inode, [1] offset, [2] length; data ICA attached -> bytes read */
    FS_WRITE,        /* [0] inode, [1] offset, [2] length; data ICA attached -> bytes written */
    FS_READBLOCK,    /* [0] inode, [1] block offset, [2] blocks (1..ICA_MAX_ATTACHED... see docs);
                        data ICA attached; FS forwards to BLK, which returns to the requester */
    FS_STAT,         /* payload: path, or [0] inode when the payload is empty -> 0;
                        [1] <- size, [2] <- mode, [3] <- links, [4] <- blocks, [5] <- inode */
    FS_TRUNCATE,     /* [0] inode, [1] size -> 0 */
    FS_UNLINK,       /* payload: path -> 0 */
    FS_MKDIR,        /* payload: path -> inode */
    FS_RMDIR,        /* payload: path -> 0 */
    FS_RENAME,       /* payload: old path, NUL, new path -> 0 */
    FS_READDIR,      /* [0] inode, [1] cursor -> 1 (entry in payload: struct fs_dirent,
                        [1] <- next cursor) or 0 at the end */
    FS_SYNC,         /* -> 0 once everything written so far is on the disk */
};

#define FS_OPEN_CREATE 1u
#define FS_OPEN_TRUNCATE 2u
#define FS_OPEN_DIRECTORY 4u /* fail unless it is a directory */

struct fs_dirent {
    uint32_t inode;
    uint32_t type; /* 1 file, 2 directory, 0 other */
    char name[256];
};

/* BLK requests (server "blk"). Blocks are STORAGE_BLOCK_BYTES on the disk. */
enum blk_operation {
    BLK_READ = 32,  /* [0] disk block, [1] blocks; data ICA attached -> bytes */
    BLK_WRITE,      /* [0] disk block, [1] blocks; data ICA attached -> bytes */
    BLK_SYNC,       /* -> 0 once every dirty block is on the disk */
    BLK_STATS,      /* -> 0; [0] <- hits, [1] <- misses, [2] <- dirty, [3] <- cached blocks */
};

/* DK requests (server "dk"). */
enum dk_operation {
    DK_READ = 64,   /* [0] first sector, [1] sectors; data ICA attached -> bytes */
    DK_WRITE,       /* [0] first sector, [1] sectors; data ICA attached -> bytes */
    DK_INFO,        /* -> 0; [0] <- sectors on the disk, [1] <- sector bytes */
};
