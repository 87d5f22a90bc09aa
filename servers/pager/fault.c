/* fault.c: swap-in on a fault (seed 004 §4.1) and the prefetch and drop
 * hints. A fault makes room first (its stores go out asynchronously), then
 * maps fresh zeroed frames or the block fetched from the backend. */
#include "pager.h"
#include <formica/request.h>
#include <formica/user.h>

/* Fetches the block into a new data ICA and moves its frames into the process. */
static long swap_in_from_backend(struct client *client, uint32_t block)
{
    uint64_t address = block_address(client, block), bytes = client->block_bytes;
    if (!client->has_copy[block] || client->slot[block] == PAGER_NO_SLOT)
        return -E_IO; /* its store failed: the contents are lost */
    long ica = ica_allocate(ICA_KIND_DATA, bytes);
    if (ica < 0)
        return ica;
    long error = client->backend->retrieve(client, block, (uint64_t)ica);
    if (error == 0)
        error = pager_map(client->pid, address, bytes, (uint64_t)ica);
    if (error != 0) {
        ica_free((uint64_t)ica);
        return error;
    }
    client->counters.swap_in_blocks++;
    client->counters.bytes_in += bytes;
    return 0;
}

static long swap_in(struct client *client, uint32_t block)
{
    long error;
    if (client->state[block] == BLOCK_UNTOUCHED) {
        error = pager_map(client->pid, block_address(client, block), client->block_bytes, 0);
        if (error == 0)
            client->counters.zero_fills++;
    } else {
        error = swap_in_from_backend(client, block);
    }
    if (error != 0)
        return error;
    client->state[block] = BLOCK_RESIDENT;
    policy_add(&client->policy, block);
    return 0;
}

/* A block whose store is still in flight: wait until the backend has it. */
static void wait_until_stored(struct client *client, uint32_t block)
{
    while (client->state[block] == BLOCK_STORING)
        if (client->backend->wait_one() != 0)
            break;
}

long fault_serve(struct client *client, uint64_t address)
{
    if (address < client->base || address - client->base >= client->bytes)
        return -E_FAULT;
    uint32_t block = (uint32_t)((address - client->base) / client->block_bytes);
    if (client->state[block] == BLOCK_RESIDENT)
        return 0; /* another core's access got there first: retry */
    wait_until_stored(client, block);
    long error = make_room(client, 1);
    return error != 0 ? error : swap_in(client, block);
}

long prefetch_range(struct client *client, uint64_t address, uint64_t bytes)
{
    uint32_t first, last, fetched = 0, budget = client->limit_blocks / 2;
    if (!policy_block_range(client->base, client->bytes, client->block_bytes, address, bytes,
                            &first, &last))
        return 0;
    for (uint32_t block = first; block <= last && fetched < budget; block++) {
        if (client->state[block] == BLOCK_RESIDENT)
            continue;
        wait_until_stored(client, block);
        long error = make_room(client, 1);
        if (error == 0)
            error = swap_in(client, block);
        if (error != 0)
            return error;
        fetched++;
    }
    return fetched;
}

long drop_range(struct client *client, uint64_t address, uint64_t bytes)
{
    uint32_t first, last, dropped = 0;
    if (!policy_block_range(client->base, client->bytes, client->block_bytes, address, bytes,
                            &first, &last))
        return 0;
    for (uint32_t block = first; block <= last; block++) {
        if (client->state[block] != BLOCK_RESIDENT)
            continue;
        policy_hint_drop(&client->policy, block);
        dropped++;
    }
    return dropped;
}
