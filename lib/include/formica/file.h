/* file.h: the POSIX-like file interface of Formica's user library, built on
 * FS requests (formica/storage.h) over one reused control ICA and one data
 * ICA per process. Every call returns a value >= 0 or a negative -E_* code. */
#pragma once
#include <formica/ica.h>
#include <formica/storage.h>
#include <stddef.h>
#include <stdint.h>

/* open() flags: one access mode, or'ed with any of the others. */
#define O_RDONLY 0x0
#define O_WRONLY 0x1
#define O_RDWR 0x2
#define O_ACCMODE 0x3
#define O_CREAT 0x40
#define O_TRUNC 0x200
#define O_APPEND 0x400
#define O_DIRECTORY 0x10000 /* fail with -E_NOT_DIRECTORY unless it is one */

#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2

#define FILE_MAX_OPEN 32   /* descriptors per process (0 .. 31) */
#define FILE_PATH_MAX 1024 /* a path holds at most FILE_PATH_MAX - 1 bytes */
#define FILE_NAME_MAX 255  /* one directory entry's name */
#define FILE_MODE_TYPE 0xf000u
#define FILE_MODE_DIRECTORY 0x4000u /* ext2's i_mode file types */
#define FILE_MODE_REGULAR 0x8000u

struct file_status {
    uint64_t size;   /* bytes */
    uint64_t blocks; /* 512-byte sectors in use (ext2 i_blocks) */
    uint32_t mode;   /* ext2 i_mode: type and permission bits */
    uint32_t links;
    uint32_t inode;
    uint32_t uid; /* owner */
    uint32_t gid; /* group */
};

struct directory_entry {
    uint32_t inode;
    uint32_t type; /* 1 file, 2 directory, 0 other (struct fs_dirent) */
    char name[FILE_NAME_MAX + 1];
};

/* Descriptors. open returns the new descriptor. */
int open(const char *path, int flags);
long close(int fd);

/* Data at the descriptor's offset (read, write) or at `offset` (pread,
 * pwrite); a short count means the end of the file. Transfers larger than
 * the data ICA are split into pieces of its size. */
long read(int fd, void *buffer, size_t length);
long write(int fd, const void *buffer, size_t length);
long pread(int fd, void *buffer, size_t length, uint64_t offset);
long pwrite(int fd, const void *buffer, size_t length, uint64_t offset);
/* The new offset. */
long lseek(int fd, int64_t offset, int whence);
long ftruncate(int fd, uint64_t size);

long fstat(int fd, struct file_status *status);
long stat(const char *path, struct file_status *status);
static inline int file_is_directory(uint32_t mode)
{
    return (mode & FILE_MODE_TYPE) == FILE_MODE_DIRECTORY;
}

/* Names. */
long unlink(const char *path);
long mkdir(const char *path);
long rmdir(const char *path);
long rename(const char *old_path, const char *new_path);
/* Ownership: permission bits (the owner or uid 0), owner and group (uid 0). */
long chmod(const char *path, uint32_t permissions);
long chown(const char *path, uint32_t uid, uint32_t gid);

/* Directories: open with O_DIRECTORY (or opendir), then readdir until it
 * returns 0; 1 means `entry` holds the next entry. */
int opendir(const char *path);
long readdir(int fd, struct directory_entry *entry);
static inline long closedir(int fd)
{
    return close(fd);
}

/* fsync: the file's data and every change to the file system so far are
 * durable (FS_FSYNC: on ext3 the running journal transaction commits, on
 * ext2 the whole cache is written), and the process's readbyte buffer of it
 * is dropped. sync: everything written so far is on the disk (FS_SYNC: on
 * ext3 the journal is also checkpointed, left empty). */
long fsync(int fd);
long sync(void);

/* Table 1 of seed 003, and the write counterparts used by Bonnie
 * (docs/files.md). Blocks are STORAGE_BLOCK_BYTES (4 KiB).
 *
 * readblock: one FS_READBLOCK request for `size` blocks from block `blkoff`
 * (every call goes to the servers). On success *data points at the bytes,
 * which stay valid and unchanged until the process's next file call; returns
 * the number of bytes (less than size * 4096 at the end of the file, 0 past
 * it). size is 1 .. READBLOCK_MAX_BLOCKS. */
#define READBLOCK_MAX_BLOCKS (ICA_DATA_MAX_BYTES / STORAGE_BLOCK_BYTES)
long readblock(int fd, uint32_t size, uint64_t blkoff, const void **data);
/* writeblock: `size` blocks from `data` at block `blkoff`; bytes written. */
long writeblock(int fd, uint32_t size, uint64_t blkoff, const void *data);

/* readbyte: copies `size` bytes at byte `offset` into `buffer` from the
 * process's block buffer; a block's first reference fetches it with
 * readblock, later ones ask no server. Returns the bytes copied (short at the
 * end of the file). */
long readbyte(int fd, size_t size, uint64_t offset, void *buffer);
/* writebyte: writes `size` bytes at `offset` through to FS (one request per
 * data-ICA piece) and updates the blocks the process has buffered. */
long writebyte(int fd, size_t size, uint64_t offset, const void *data);
/* Drops the process's buffered blocks of fd's file, so the next readbyte
 * sees other processes' writes. */
long readbyte_invalidate(int fd);

struct readbyte_counts {
    uint64_t hits;     /* block references served from the buffer */
    uint64_t fetches;  /* block references that called readblock */
    uint64_t buffered; /* blocks held now */
};
void readbyte_counts_get(struct readbyte_counts *counts);
