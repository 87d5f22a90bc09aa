/* cache_lends.h: BLK's limit on lent blocks. A lent block is never evicted
 * (its borrower reads it in place), so lends are bounded: at most
 * `per_client` blocks per requester and `total` for all of them together
 * (half the cache); past a limit BLK copies into the requester's data ICA
 * instead. Lends are kept per control ICA: when that control ICA comes back
 * to BLK, its holder has passed it on, which ended the lends (the kernel
 * unmaps them), so they are forgotten at once. Plain C over a callback, so
 * the host tests can run it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define CACHE_LENDS_PER_CLIENT 64u /* the default of `blk --lend-limit N` */
/* Per-client counts are kept by pid modulo this: live processes' pids differ
 * modulo the kernel's 256 process slots, so a count is exact for them; an
 * ended pid's count is set right at the next drop of ended lends. */
#define CACHE_LENDS_COUNTERS 256u
/* Lends are kept by the control ICA's pool index (its id modulo this: the
 * index is the id's low 24 bits, and the pool has 4,096 control ICAs). */
#define CACHE_LENDS_CONTROLS 4096u
#define CACHE_LENDS_PER_CONTROL 4u /* = ICA_MAX_ATTACHED */

/* The blocks lent with one control ICA. */
struct control_lends {
    uint64_t control; /* whose lends these are (none when count is 0) */
    uint32_t client;  /* the pid they were lent to (the request's origin) */
    uint32_t count;
    uint64_t handles[CACHE_LENDS_PER_CONTROL]; /* the block ICAs lent */
};

struct cache_lends {
    struct control_lends *by_control; /* CACHE_LENDS_CONTROLS entries */
    uint32_t count, total, per_client;
    /* True while `handle` is still lent to someone (SYS_ICA_LEND_COUNT > 0). */
    bool (*still_lent)(void *context, uint64_t handle);
    void *context;
    uint32_t refused_client;               /* the client last logged as over its limit, 0 if none */
    uint32_t counts[CACHE_LENDS_COUNTERS]; /* blocks lent per client, by pid modulo */
};

/* Room for the lends; 0 or -E_NO_MEMORY. */
int cache_lends_init(struct cache_lends *lends, uint32_t total, uint32_t per_client,
                     bool (*still_lent)(void *context, uint64_t handle), void *context);
/* Blocks counted as lent to `client` now. */
static inline uint32_t cache_lends_of(const struct cache_lends *lends, uint32_t client)
{
    return lends->counts[client % CACHE_LENDS_COUNTERS];
}
static inline bool cache_lends_within_limits(const struct cache_lends *lends, uint32_t client,
                                             uint32_t blocks)
{
    return blocks <= lends->total - lends->count &&
           cache_lends_of(lends, client) + blocks <= lends->per_client;
}
/* cache_lends_allow once a limit is reached: drops the ended lends, asks again. */
bool cache_lends_allow_after_drop(struct cache_lends *lends, uint32_t client, uint32_t blocks);
/* True when `client` may borrow `blocks` more now. Lends whose control ICA
 * never came back (its holder ended) are looked up with still_lent, only
 * when a limit would otherwise refuse. Inline: a few loads per readblock. */
static inline bool cache_lends_allow(struct cache_lends *lends, uint32_t client, uint32_t blocks)
{
    return cache_lends_within_limits(lends, client, blocks) ||
           cache_lends_allow_after_drop(lends, client, blocks);
}
/* The entry that keeps the lends made with `control` (its pool index). */
static inline struct control_lends *cache_lends_entry(const struct cache_lends *lends,
                                                      uint64_t control)
{
    return &lends->by_control[control % CACHE_LENDS_CONTROLS];
}
/* Forgets the lends of `entry` (they ended). Every count it takes back was
 * added by the cache_lends_record that filled the entry, so none goes below
 * zero. Inline: one per readblock. */
static inline void cache_lends_forget(struct cache_lends *lends, struct control_lends *entry)
{
    lends->counts[entry->client % CACHE_LENDS_COUNTERS] -= entry->count;
    lends->count -= entry->count;
    entry->count = 0;
}
/* Records that `handles` (count of them, at most CACHE_LENDS_PER_CONTROL)
 * were lent to `client` with `control`; allowed before. Inline: one per
 * readblock. */
static inline void cache_lends_record(struct cache_lends *lends, uint64_t control, uint32_t client,
                                      const uint64_t *handles, uint32_t count)
{
    struct control_lends *entry = cache_lends_entry(lends, control);
    /* An older control ICA of this slot was freed since, or this one is
     * lent with again: either way its earlier lends ended. */
    if (entry->count > 0)
        cache_lends_forget(lends, entry);
    if (count > CACHE_LENDS_PER_CONTROL)
        count = CACHE_LENDS_PER_CONTROL;
    entry->control = control;
    entry->client = client;
    entry->count = count;
    for (uint32_t i = 0; i < count; i++)
        entry->handles[i] = handles[i];
    lends->count += count;
    lends->counts[client % CACHE_LENDS_COUNTERS] += count;
}
/* `control` came back to BLK: what was lent with it has ended. Inline: one
 * look per request. */
static inline void cache_lends_returned(struct cache_lends *lends, uint64_t control)
{
    struct control_lends *entry = cache_lends_entry(lends, control);
    if (entry->count > 0 && entry->control == control)
        cache_lends_forget(lends, entry);
}
