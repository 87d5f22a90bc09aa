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
            cache_lends_forget(lends, entry);
    }
}

bool cache_lends_allow_after_drop(struct cache_lends *lends, uint32_t client, uint32_t blocks)
{
    drop_ended(lends);
    return cache_lends_within_limits(lends, client, blocks);
}
