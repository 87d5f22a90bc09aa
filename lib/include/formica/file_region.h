/* file_region.h: file regions, the kernel's half of mmap (docs/mmap.md): a
 * range of a process's address space whose faults become FS_MAP_FAULT
 * requests, answered with BLK's blocks lent at the faulting addresses. */
#pragma once
#include <stdint.h>

/* Where file regions go: a window of its own, under one root entry. */
#define FILE_REGION_BASE 0x0000300000000000ull
#define FILE_REGION_WINDOW_BYTES (1ull << 39)
#define FILE_REGION_MAX_BYTES (64ull << 30)
#define FILE_REGIONS_PER_PROCESS 16

/* SYS_FILE_REGION's flags (the region's record keeps them). */
#define FILE_REGION_READ 0x1u    /* PROT_READ */
#define FILE_REGION_WRITE 0x2u   /* PROT_WRITE */
#define FILE_REGION_SHARED 0x10u /* MAP_SHARED: stores reach the file */
#define FILE_REGION_PRIVATE 0x20u
#define FILE_REGION_FIXED 0x40u      /* the address given is the base */
#define FILE_REGION_SEQUENTIAL 0x80u /* MADV_SEQUENTIAL: every fault fetches ahead */
#define FILE_REGION_KNOWN_FLAGS 0xf3u

/* FS_MAP_FAULT's flags. */
#define FS_MAP_FAULT_WRITE 0x1u      /* a store */
#define FS_MAP_FAULT_FILL_HOLES 0x2u /* a shared writable region: a hole read is filled */
/* Pages one fault asks for: the page and up to three following ones. */
#define FILE_REGION_FAULT_AROUND 4u

/* The exit code of a process that touched a mapped page past the end of
 * its file: 128 + SIGBUS, as a shell shows a signal. */
#define FILE_REGION_EXIT_PAST_END (128 + 7)

/* BLK_MAP's flag: a store faulted; one block, lent writable, marked dirty. */
#define BLK_MAP_WRITABLE 0x100u

/* What is left of a region [base, base + bytes) once [from, to) is cut
 * out of it (munmap): a head [base, base + head_bytes) and a tail
 * [tail_base, tail_base + tail_bytes), either maybe empty. The kernel's
 * record and the library's both cut with it. */
struct file_region_cut {
    uint64_t head_bytes;
    uint64_t tail_base, tail_bytes;
};

static inline struct file_region_cut file_region_cut(uint64_t base, uint64_t bytes, uint64_t from,
                                                     uint64_t to)
{
    uint64_t end = base + bytes;
    from = from < base ? base : from;
    to = to > end ? end : to;
    if (from >= to) /* nothing of it in the range: all of it stays, as the head */
        return (struct file_region_cut){bytes, end, 0};
    return (struct file_region_cut){from - base, to, end - to};
}
