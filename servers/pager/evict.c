/* evict.c: swap-out. The victim comes from the policy (referenced() is a
 * SYS_PAGER_SCAN that clears the accessed bits); clean blocks with a valid
 * backend copy are dropped, others unmapped into a data ICA and stored
 * asynchronously, bounded by the client's in-flight bytes (seed 004 §4.1). */
#include "kept_tables.h"
#include "pager.h"
#include <formica/request.h>
#include <formica/user.h>

static uint32_t stores_in_flight; /* all clients: bounded by the pager's ICAs */

static bool block_referenced(void *context, uint32_t block)
{
    struct client *client = context;
    long bits = pager_scan(client->pid, block_address(client, block), client->block_bytes,
                           PAGER_SCAN_CLEAR_ACCESSED);
    return bits > 0 && (bits & PAGER_SCAN_ACCESSED);
}

long evict_one(struct client *client)
{
    uint32_t victim = policy_choose_victim(&client->policy, block_referenced, client);
    if (victim == POLICY_NONE)
        return -E_NOT_FOUND;
    return evict_block(client, victim, false);
}

long make_room(struct client *client, uint32_t blocks)
{
    while (policy_resident_count(&client->policy) + blocks > client->limit_blocks) {
        long error = evict_one(client);
        if (error != 0)
            return error == -E_NOT_FOUND ? 0 : error;
    }
    return 0;
}

/* Unmodified: the frames are freed. A block never written and never stored
 * is all zeros, so it simply becomes untouched again. */
static long drop_clean(struct client *client, uint32_t block)
{
    long error = pager_unmap(client->pid, block_address(client, block), client->block_bytes, false);
    if (error < 0)
        return error;
    client->state[block] = client->has_copy[block] ? BLOCK_ON_BACKEND : BLOCK_UNTOUCHED;
    client->counters.clean_drops++;
    return 0;
}

/* Waits for one store of any client; false when none is outstanding. */
static bool wait_one_store(const struct client *client)
{
    return client->backend->wait_one() == 0;
}

static long make_store_room(struct client *client)
{
    while (inflight_must_wait(&client->inflight, client->block_bytes) ||
           stores_in_flight >= PAGER_MAX_IN_FLIGHT_STORES || !kept_tables_can_stage(client))
        if (!wait_one_store(client))
            break;
    return 0;
}

/* Unmaps the block into a data ICA and hands it to the backend. If the
 * backend refuses at once, the frames go back into the process. */
static long start_store(struct client *client, uint32_t block)
{
    uint64_t address = block_address(client, block), bytes = client->block_bytes;
    make_store_room(client);
    uint8_t had_copy = client->has_copy[block];
    client->has_copy[block] = 0; /* kept first: a restarted pager must not trust the old copy */
    client->state[block] = BLOCK_STORING;
    long ica = pager_unmap(client->pid, address, bytes, true);
    if (ica <= 0) {
        client->state[block] = BLOCK_RESIDENT;
        client->has_copy[block] = had_copy;
        return ica < 0 ? ica : -E_INVALID;
    }
    kept_tables_note_store(client, block, (uint64_t)ica);
    kept_tables_stage_store(client, block, (uint64_t)ica);
    inflight_start(&client->inflight, bytes);
    stores_in_flight++;
    long error = client->backend->store(client, block, (uint64_t)ica);
    if (error == 0) {
        client->counters.swap_out_blocks++;
        client->counters.bytes_out += bytes;
        return 0;
    }
    inflight_finish(&client->inflight, bytes);
    stores_in_flight--;
    kept_tables_end_store(client, block);
    if (pager_map(client->pid, address, bytes, (uint64_t)ica) == 0) {
        client->state[block] = BLOCK_RESIDENT;
        policy_add(&client->policy, block);
    } else {
        ica_free((uint64_t)ica);
        client->state[block] = BLOCK_ON_BACKEND;
        client->has_copy[block] = 0; /* lost: the next fault reports it */
    }
    return error;
}

void store_completed(struct client *client, uint32_t block, long result)
{
    inflight_finish(&client->inflight, client->block_bytes);
    if (stores_in_flight > 0)
        stores_in_flight--;
    client->state[block] = BLOCK_ON_BACKEND;
    client->has_copy[block] = result >= 0;
    kept_tables_end_store(client, block); /* after the table says where the copy is */
}

long evict_block(struct client *client, uint32_t block, bool wait_for_store)
{
    policy_remove(&client->policy, block);
    long bits = pager_scan(client->pid, block_address(client, block), client->block_bytes, 0);
    if (bits < 0)
        return bits;
    /* Clean, but its backend copies were lost (a dead memory node): store it again. */
    bool copy_lost = !client->has_copy[block] && client->slot[block] != PAGER_NO_SLOT;
    if (!(bits & PAGER_SCAN_DIRTY) && !copy_lost)
        return drop_clean(client, block);
    long error = start_store(client, block);
    if (error == 0 && wait_for_store)
        error = wait_for_stores(client);
    return error;
}

long wait_for_stores(struct client *client)
{
    while (client->inflight.bytes > 0)
        if (!wait_one_store(client))
            break;
    return 0;
}
