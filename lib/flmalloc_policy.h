/* flmalloc_policy.h: libflmalloc's decisions, apart from any memory (pure,
 * host-tested in tests/unit/test_flmalloc_policy.c): where a request goes,
 * the local budget it takes and gives back, and the sizes it asks for. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Requests under this many bytes are always malloc'ed (the paper's 10 MiB). */
#define FLMALLOC_ALWAYS_LOCAL (10ull << 20)
/* The default local limit: this part of the memory report's available. */
#define FLMALLOC_LOCAL_PERCENT 80
/* A local block's header: its size and a check (16 bytes keep malloc's alignment). */
#define FLMALLOC_HEADER_BYTES 16ull
/* Far files are mapped in whole pages. */
#define FLMALLOC_PAGE_BYTES 4096ull

enum flmalloc_place {
    FLMALLOC_LOCAL,   /* malloc, with a header */
    FLMALLOC_FAR,     /* a file mapped shared */
    FLMALLOC_REFUSED, /* a size no header or page rounding can hold */
};

struct flmalloc_budget {
    uint64_t limit;      /* the local total a request of 10 MiB or more may bring it to */
    uint64_t local;      /* bytes held locally now (every local request's size) */
    uint64_t local_peak; /* the most `local` has been */
};

/* `percent` % of `available`, without overflow. */
uint64_t flmalloc_limit_of(uint64_t available, uint32_t percent);
void flmalloc_budget_init(struct flmalloc_budget *budget, uint64_t limit);
/* Local under 10 MiB, and while `bytes` more keep the local total within
 * the limit; far beyond; refused when a header or page rounding overflows. */
enum flmalloc_place flmalloc_choose(const struct flmalloc_budget *budget, uint64_t bytes);
/* The budget's account of a local block taken and given back. */
void flmalloc_took_local(struct flmalloc_budget *budget, uint64_t bytes);
void flmalloc_gave_local(struct flmalloc_budget *budget, uint64_t bytes);
/* count * size into *bytes; false when it overflows. */
bool flmalloc_array_bytes(uint64_t count, uint64_t size, uint64_t *bytes);
/* A far request's file and mapping length: `bytes` (at least 1) up to whole pages. */
uint64_t flmalloc_far_length(uint64_t bytes);
/* The check word a local header stores beside the size. */
uint64_t flmalloc_header_check(uint64_t bytes);
