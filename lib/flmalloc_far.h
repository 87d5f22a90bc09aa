/* flmalloc_far.h: libflmalloc's far memory (lib/flmalloc_far.c): a file in
 * the far folder, truncated to the length, mapped shared and unlinked at
 * once; unmapped and closed when freed. */
#pragma once
#include <stdint.h>

struct flmalloc_far {
    void *base;      /* the mapping (page-aligned) */
    uint64_t length; /* its bytes: the request up to whole pages */
    uint64_t bytes;  /* what was asked */
    int fd;          /* the file's descriptor, closed by flmalloc_far_unmap */
};

/* Maps `length` bytes (whole pages) of a new file of `directory` named
 * PID.N; 0, or an -E_* code after a message (nothing is left behind). */
long flmalloc_far_map(const char *directory, uint64_t length, struct flmalloc_far *far);
void flmalloc_far_unmap(struct flmalloc_far *far);
