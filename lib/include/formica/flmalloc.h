/* flmalloc.h: libflmalloc (seed 000 §5.1; docs/files.md, "libflmalloc"):
 * malloc for requests under 10 MiB and while the local total stays within
 * the local limit (80 % of the memory report's available at setup, or the
 * limit flmalloc_setup gives); any other request is memory backed by a file
 * on the disk, /flm/PID.N, created, truncated to size, mapped shared and
 * unlinked at once. Linking a program with FLMALLOC=1 (--wrap of malloc,
 * calloc, realloc and free) sends its allocations here unchanged. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define FLMALLOC_DIRECTORY "/flm" /* where far files are made (world-writable, sticky) */
#define FLMALLOC_FAR_MAX 16       /* far files mapped at once (each holds a descriptor) */

/* Zero fields take the defaults. */
struct flmalloc_options {
    uint64_t local_limit_bytes; /* 0: 80 % of SYS_MEMORY_REPORT's available now */
    const char *directory;      /* NULL: FLMALLOC_DIRECTORY (another tier's folder) */
};

struct flmalloc_stats {
    uint64_t local_limit;       /* the local limit in force */
    uint64_t local_bytes;       /* bytes of the local blocks held now */
    uint64_t local_peak;        /* the most local_bytes has been */
    uint64_t far_bytes;         /* bytes mapped from far files now (whole pages) */
    uint32_t far_files;         /* far files mapped now */
    uint32_t far_files_peak;    /* the most far_files has been */
    uint64_t local_allocations; /* local blocks handed out so far (realloc's included) */
    uint64_t far_allocations;   /* far files mapped so far */
    uint64_t failures;          /* requests answered NULL (a message says why) */
};

/* Sets the local limit and the far folder; 0, or the memory report's error
 * (the limit is then 0: every request of 10 MiB or more goes far). The first
 * flmalloc call sets up with the defaults when no one has. */
long flmalloc_setup(const struct flmalloc_options *options);
void *flmalloc(size_t bytes);
/* Zeroed: a local block is cleared, a far file is zeroes already. */
void *flcalloc(size_t count, size_t size);
/* Moves the data when the block cannot hold `bytes` where it is;
 * flrealloc(NULL, n) is flmalloc(n), flrealloc(p, 0) frees p (NULL). */
void *flrealloc(void *pointer, size_t bytes);
/* Frees a local block, or unmaps a far one and closes its file; a pointer
 * that is neither a far mapping nor behind a local header that checks is
 * refused with a message and left alone. */
void flfree(void *pointer);
void flmalloc_stats_get(struct flmalloc_stats *stats);
/* One @json {"kind":"flmalloc",...} line of the statistics. */
void flmalloc_stats_print(void);
