/* cache_lends.c: counts the blocks BLK has lent, per client and in all,
 * so that no client (nor all of them) can pin the whole cache: lent blocks
 * are never evicted. Ended lends are found lazily, by asking still_lent
 * only when a limit is reached, so the readblock path stays two loads. */
#include "cache_lends.h"
#include <formica/errors.h>
#include <stdlib.h>

int cache_lends_init(struct cache_lends *lends, uint32_t total, uint32_t per_client,
                     bool (*still_lent)(void *context, uint64_t handle), void *context)
{
    *lends = (struct cache_lends){
        .total = total, .per_client = per_client, .still_lent = still_lent, .context = context};
    lends->records = calloc(total > 0 ? total : 1, sizeof(struct lend_record));
    return lends->records == NULL ? -E_NO_MEMORY : 0;
}

uint32_t cache_lends_of(const struct cache_lends *lends, uint32_t client)
{
    return lends->counts[client % CACHE_LENDS_COUNTERS];
}

/* Drops the records of blocks nobody borrows any more and counts the rest again. */
static void drop_ended(struct cache_lends *lends)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < CACHE_LENDS_COUNTERS; i++)
        lends->counts[i] = 0;
    for (uint32_t i = 0; i < lends->count; i++) {
        if (!lends->still_lent(lends->context, lends->records[i].handle))
            continue;
        lends->records[kept++] = lends->records[i];
        lends->counts[lends->records[i].client % CACHE_LENDS_COUNTERS]++;
    }
    lends->count = kept;
}

static bool within_limits(const struct cache_lends *lends, uint32_t client, uint32_t blocks)
{
    return blocks <= lends->total - lends->count &&
           cache_lends_of(lends, client) + blocks <= lends->per_client;
}

bool cache_lends_allow(struct cache_lends *lends, uint32_t client, uint32_t blocks)
{
    if (within_limits(lends, client, blocks))
        return true;
    drop_ended(lends);
    return within_limits(lends, client, blocks);
}

void cache_lends_record(struct cache_lends *lends, uint32_t client, const uint64_t *handles,
                        uint32_t count)
{
    for (uint32_t i = 0; i < count && lends->count < lends->total; i++) {
        lends->records[lends->count++] = (struct lend_record){handles[i], client};
        lends->counts[client % CACHE_LENDS_COUNTERS]++;
    }
}
