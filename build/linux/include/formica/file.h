/* build/linux/include/formica/file.h: the Linux stand-in for Formica's file
 * API, so apps/bonnie compiles unchanged as a static Linux program
 * (build/linux/build.sh). POSIX calls keep their libc meaning; open, fstat
 * and sync get Formica's signatures through function-like macros; readblock
 * and readbyte are implemented in build/linux/bonnie_linux.c. */
#pragma once
/* libc's declarations first, so the macros below never rename them. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <formica/errors.h>

#define STORAGE_BLOCK_BYTES 4096u     /* readblock's block, as on Formica */
#define ICA_DATA_MAX_BYTES (1u << 20) /* Formica's largest readblock */

struct file_status {
    uint64_t size;
    uint32_t inode;
    uint32_t mode;
};

#define FILE_PATH_MAX 1024 /* as Formica's: a path holds at most FILE_PATH_MAX - 1 bytes */

/* Formica's open takes no mode: files are created 0644. */
int linux_file_open(const char *path, int flags);
long linux_file_fstat(int fd, struct file_status *status);
long linux_file_sync(void);
#define open(path, flags) linux_file_open(path, flags)
#define fstat(fd, status) linux_file_fstat(fd, status)
#define sync() linux_file_sync()
/* Formica's mkdir takes no mode (0755) and answers -E_EXISTS for a name that is there
 * (build/linux/flmalloc_linux.c: for lib/flmalloc_far.c). */
long linux_file_mkdir(const char *path);
#define mkdir(path) linux_file_mkdir(path)
/* Formica's sys/mman.h's: the last failed mmap's error; on Linux -1, which error_text turns
 * into errno's text. */
long mmap_error(void);

/* readblock: pread of `size` blocks from block `blkoff` into a per-process
 * buffer; *data points at it until the next call. */
long readblock(int fd, uint32_t size, uint64_t blkoff, const void **data);
/* readbyte: through a per-process direct-mapped buffer of 4 KiB blocks; a
 * block's first reference preads it, later ones make no system call. */
long readbyte(int fd, size_t size, uint64_t offset, void *buffer);
/* writebyte: pwrite through, updating the buffered blocks. */
long writebyte(int fd, size_t size, uint64_t offset, const void *data);

struct readbyte_counts {
    uint64_t hits;
    uint64_t fetches;
    uint64_t buffered;
};
void readbyte_counts_get(struct readbyte_counts *counts);
