/* sys/mman.h: files mapped into memory (POSIX mmap, munmap, msync, madvise),
 * built on file regions and BLK's mapping lends (docs/design.md, "Files
 * mapped into memory"). mmap fails with MAP_FAILED, the others with a negative
 * E_*; mmap_error() gives the E_* of the calling process's last failed mmap. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define PROT_NONE 0x0
#define PROT_READ 0x1
#define PROT_WRITE 0x2

#define MAP_SHARED 0x01
#define MAP_PRIVATE 0x02
#define MAP_FIXED 0x10

#define MAP_FAILED ((void *)-1)

#define MS_ASYNC 0x1
#define MS_INVALIDATE 0x2
#define MS_SYNC 0x4

#define MADV_NORMAL 0
#define MADV_SEQUENTIAL 2
#define MADV_WILLNEED 3
#define MADV_DONTNEED 4

void *mmap(void *address, size_t length, int protection, int flags, int fd, int64_t offset);
int munmap(void *address, size_t length);
int msync(void *address, size_t length, int flags);
int madvise(void *address, size_t length, int advice);
long mmap_error(void);
