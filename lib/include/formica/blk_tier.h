/* blk_tier.h: what BLK's NVM tier reports and the actions it takes
 * (protocol/blk.messages: BLK_TIER_REPORT, BLK_TIER_CONTROL; the shell's
 * `tier`, docs/storage.md "The NVM tier"). */
#pragma once
#include <stdint.h>

enum blk_tier_state {
    BLK_TIER_NONE = 0,      /* no --nvm-tier: BLK caches in DRAM */
    BLK_TIER_ATTACHED = 1,  /* the cache is the tier */
    BLK_TIER_REFUSED = 2,   /* written for another disk, or corrupted: every request -E_CORRUPT */
    BLK_TIER_DETACHED = 3,  /* `tier detach`: written back, BLK caches in DRAM */
    BLK_TIER_TOO_SMALL = 4, /* the NVDIMM cannot hold the tier: BLK caches in DRAM */
};

enum blk_tier_action {
    BLK_TIER_FLUSH = 1,  /* a pass now: every dirty line written back */
    BLK_TIER_DETACH = 2, /* a pass, the header `detached`, then the DRAM cache */
    BLK_TIER_FORMAT = 3, /* every line dropped, the header written for this disk */
};

/* BLK_TIER_REPORT's payload. */
struct blk_tier_report {
    uint64_t hits, misses, read_ahead, bypasses, fills;
    uint64_t dirty_lines, cached_lines, lines, sets, ways;
    uint64_t writeback_runs, writeback_bytes, passes, pass_failures;
    uint64_t nvm_bytes;
    /* Lends that bound a line to a block ICA of its own (lent itself, no
     * copy), and lends that copied a line into a DRAM block; a line's later
     * lends reuse its binding or copy and are not counted. */
    uint64_t direct_lends, lend_copies;
    uint64_t disk_bytes;       /* the disk behind the tier (its identity's sectors x 512) */
    uint64_t mapped_evictions; /* clean lines taken back from mappings (theirs revoked) */
    uint32_t state, write_through;
    char refusal[160];
};
