/* cache_lends.c: counts the blocks BLK has lent, per client and in all,
 * so that no client (nor all of them) can pin the whole cache: lent blocks
 * are never evicted. A control ICA's lends end when it comes back; lends of
 * holders that ended are found lazily (still_lent), only when a limit is
 * reached, so the readblock path stays a few loads and stores. */
#include "cache_lends.h"
#include <formica/errors.h>
#include <stdlib.h>

int cache_lends_init(struct cache_lends *lends, uint32_t total, uint32_t per_client,
                     bool (*still_lent)(void *context, uint64_t handle), void *context)
{
    *lends = (struct cache_lends){
        .total = total, .per_client = per_client, .still_lent = still_lent, .context = context};
    lends->by_control = calloc(CACHE_LENDS_CONTROLS, sizeof(struct control_lends));
    return lends->by_control == NULL ? -E_NO_MEMORY : 0;
}

uint32_t cache_lends_of(const struct cache_lends *lends, uint32_t client)
{
    return lends->counts[client % CACHE_LENDS_COUNTERS];
}

static struct control_lends *entry_of(const struct cache_lends *lends, uint64_t control)
{
    return &lends->by_control[control % CACHE_LENDS_CONTROLS];
}

static void forget(struct cache_lends *lends, struct control_lends *entry)
{
    uint32_t *counted = &lends->counts[entry->client % CACHE_LENDS_COUNTERS];
    *counted -= entry->count <= *counted ? entry->count : *counted;
    lends->count -= entry->count <= lends->count ? entry->count : lends->count;
    entry->control = 0;
    entry->count = 0;
}

static bool any_still_lent(const struct cache_lends *lends, const struct control_lends *entry)
{
    for (uint32_t i = 0; i < entry->count; i++)
        if (lends->still_lent(lends->context, entry->handles[i]))
            return true;
    return false;
}

/* Forgets the lends nobody borrows any more (their holders ended). */
static void drop_ended(struct cache_lends *lends)
{
    for (uint32_t i = 0; i < CACHE_LENDS_CONTROLS; i++) {
        struct control_lends *entry = &lends->by_control[i];
        if (entry->count > 0 && !any_still_lent(lends, entry))
            forget(lends, entry);
    }
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

void cache_lends_returned(struct cache_lends *lends, uint64_t control)
{
    struct control_lends *entry = entry_of(lends, control);
    if (entry->count > 0 && entry->control == control)
        forget(lends, entry);
}

void cache_lends_record(struct cache_lends *lends, uint64_t control, uint32_t client,
                        const uint64_t *handles, uint32_t count)
{
    struct control_lends *entry = entry_of(lends, control);
    /* An older control ICA of this slot was freed since, or this one is
     * lent with again: either way its earlier lends ended. */
    if (entry->count > 0)
        forget(lends, entry);
    if (count > CACHE_LENDS_PER_CONTROL)
        count = CACHE_LENDS_PER_CONTROL;
    *entry = (struct control_lends){.control = control, .client = client, .count = count};
    for (uint32_t i = 0; i < count; i++)
        entry->handles[i] = handles[i];
    lends->count += count;
    lends->counts[client % CACHE_LENDS_COUNTERS] += count;
}
