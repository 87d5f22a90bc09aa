/* teramem.h: pager-backed memory for applications (seed 004 §3.5).
 * docs/pager.md explains the options, the backends and persistence. */
#pragma once
#include <formica/pager.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TERAMEM_DEFAULT_LIMIT (16ull << 20)
#define TERAMEM_DEFAULT_BLOCK (64u << 10)
#define TERAMEM_DEFAULT_CAPACITY (32ull << 20)

/* Zero fields take the defaults. */
struct teramem_options {
    uint64_t local_limit_bytes; /* most bytes resident at once (default 16 MiB) */
    uint32_t block_bytes;       /* swap unit, 4 KiB .. 1 MiB, a power of two (default 64 KiB) */
    uint32_t policy;            /* PAGER_POLICY_LRU (default) or PAGER_POLICY_FIFO */
    uint32_t backend;           /* PAGER_BACKEND_NODE, _NVM, _DISK (default), _BLOCK or _VEMS */
    uint32_t replicas;       /* memory nodes: copies of each block on distinct nodes (default 1) */
    uint64_t capacity_bytes; /* size of the region teramalloc hands out (default 32 MiB) */
    uint64_t inflight_bytes; /* bound on bytes being swapped out (default limit / 8) */
    uint64_t persistent_key; /* NVM: keep the contents under this key across reboots (0: no) */
};

struct teramem_stats {
    uint64_t swap_in_blocks, swap_out_blocks, bytes_in, bytes_out, clean_drops;
    uint64_t resident_bytes, peak_inflight_bytes, zero_fills;
};

/* Reserves the region and registers it with the pager: 0, 1 when a
 * persistent key found its previous contents, or a negative -E_* code (a
 * message says why: no pager, backend absent, backend too small, ...). */
long teramem_init(const struct teramem_options *options);
/* Reports the counters (the pager prints @json kind "pager") and ends the region. */
long teramem_cleanup(void);
/* First-fit inside the region, without system calls; NULL (and a message)
 * when the request does not fit in the region's free space. */
void *teramalloc(size_t bytes);
void terafree(void *pointer);
/* Hints: bring the blocks of a range in now / evict them first. Return the
 * number of blocks concerned or a negative code. */
long teramem_prefetch(const void *address, size_t bytes);
long teramem_drop(const void *address, size_t bytes);
long teramem_stats(struct teramem_stats *stats);
bool teramem_contains(const void *pointer);
/* The region's bounds (0 when there is none). */
uint64_t teramem_base(void);
uint64_t teramem_capacity(void);
const char *teramem_backend_name(uint32_t backend);
/* The command-line options every teramem program shares: -l LIMIT, -b BLOCK,
 * -P lru|fifo, --backend node|nvm|disk|block|vems, --replicas N, --key KEY, --capacity BYTES (sizes
 * with K/M/G). 1 when `flag` was one of them and `value` was good, 0 when
 * `flag` is not a teramem option, -1 (with a message) for a bad value. */
int teramem_parse_option(struct teramem_options *options, const char *flag, const char *value);
const char *teramem_policy_name(uint32_t policy);
