/* cache_lends.h: BLK's limit on lent blocks. A lent block is never evicted
 * (its borrower reads it in place), so lends are bounded: at most
 * `per_client` blocks per requester and `total` for all of them together
 * (half the cache); past a limit BLK copies into the requester's data ICA
 * instead. Plain C over a callback, so the host tests can run it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define CACHE_LENDS_PER_CLIENT 64u /* the default of `blk --lend-limit N` */
/* Per-client counts are kept by pid modulo this: live processes' pids differ
 * modulo the kernel's 256 process slots, so a count is exact for them; an
 * ended pid's count is set right at the next drop of ended lends. */
#define CACHE_LENDS_COUNTERS 256u

struct lend_record {
    uint64_t handle; /* the block ICA lent */
    uint32_t client; /* the pid it was lent to (the request's origin) */
};

struct cache_lends {
    struct lend_record *records; /* one per block lent; may include ended lends */
    uint32_t count, total, per_client;
    /* True while `handle` is still lent to someone (SYS_ICA_LEND_COUNT > 0). */
    bool (*still_lent)(void *context, uint64_t handle);
    void *context;
    uint32_t refused_client;               /* the client last logged as over its limit, 0 if none */
    uint32_t counts[CACHE_LENDS_COUNTERS]; /* records per client, by pid modulo */
};

/* Room for `total` records; 0 or -E_NO_MEMORY. */
int cache_lends_init(struct cache_lends *lends, uint32_t total, uint32_t per_client,
                     bool (*still_lent)(void *context, uint64_t handle), void *context);
/* True when `client` may borrow `blocks` more now. Records of lends that
 * ended are dropped first, only when a limit would otherwise refuse. */
bool cache_lends_allow(struct cache_lends *lends, uint32_t client, uint32_t blocks);
/* Records that `handles` (count of them) were lent to `client`; allowed before. */
void cache_lends_record(struct cache_lends *lends, uint32_t client, const uint64_t *handles,
                        uint32_t count);
/* Blocks counted as lent to `client` now (ended lends not yet dropped included). */
uint32_t cache_lends_of(const struct cache_lends *lends, uint32_t client);
