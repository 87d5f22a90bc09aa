/* fault.c: swap-in on a fault (seed 004 §4.1) and the prefetch and drop
 * hints. A fault makes room first (its stores go out asynchronously), then
 * maps fresh zeroed frames or the block fetched from the backend. */
#include "kept_tables.h"
#include "pager.h"
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

#define FAULT_AROUND_MAX 4 /* blocks mapped ahead at one fault, at most */

/* What came back from the backend is not what was stored: it is not
 * mapped, and the fault fails (the kernel ends the process with its report). */
static long report_mismatch(const struct client *client, uint32_t block)
{
    printf("pager: block %u of pid %u (address 0x%lx) read back from the %s backend does not "
           "match what was stored (checksum): not mapped; the process ends\n",
           block, client->pid, block_address(client, block), client->backend->name);
    printf("@json {\"kind\":\"pager_block_corrupt\",\"pid\":%u,\"block\":%u,"
           "\"address\":%lu,\"backend\":\"%s\"}\n",
           client->pid, block, block_address(client, block), client->backend->name);
    return -E_IO;
}

/* Moves a fetched block's frames into the process (no copy) once they match
 * the checksum of its store: it is resident. */
long map_fetched(struct client *client, uint32_t block, uint64_t data_ica, bool may_evict)
{
    long error = kept_tables_store_matches(client, block, data_ica)
                     ? client_map_block(client, block, data_ica, may_evict)
                     : report_mismatch(client, block);
    if (error != 0) {
        ica_free(data_ica);
        return error;
    }
    client->counters.swap_in_blocks++;
    client->counters.bytes_in += client->block_bytes;
    client->state[block] = BLOCK_RESIDENT;
    policy_add(&client->policy, block);
    return 0;
}

/* Fetches the block into a new data ICA and maps it. */
static long swap_in_from_backend(struct client *client, uint32_t block)
{
    if (!client->has_copy[block] || client->slot[block] == PAGER_NO_SLOT) {
        printf("pager: block %u of pid %u (address 0x%lx) has no backend copy: its store "
               "failed; the process ends\n",
               block, client->pid, block_address(client, block));
        return -E_IO;
    }
    long ica = ica_allocate(ICA_KIND_DATA, client->block_bytes);
    if (ica < 0)
        return ica;
    uint64_t start = clock_microseconds();
    long error = client->backend->retrieve(client, block, (uint64_t)ica);
    client->counters.fetch_wait_us += clock_microseconds() - start;
    if (error != 0) {
        ica_free((uint64_t)ica);
        return error;
    }
    return map_fetched(client, block, (uint64_t)ica, true);
}

static long swap_in(struct client *client, uint32_t block)
{
    if (client->state[block] != BLOCK_UNTOUCHED)
        return swap_in_from_backend(client, block);
    long error = client_map_block(client, block, 0, true);
    if (error != 0)
        return error;
    client->counters.zero_fills++;
    client->state[block] = BLOCK_RESIDENT;
    policy_add(&client->policy, block);
    return 0;
}

/* Read-ahead goes on first (the next fetch's request leaves before this fault waits for its
 * block, so one more block is on the way during the wait), then the block fetched ahead if
 * it was, else a swap-in. */
static long swap_in_or_take(struct client *client, uint32_t block)
{
    uint64_t ica;
    long result, error;
    readahead_after_fault(client, block);
    if (readahead_take(client, block, &ica, &result)) {
        if (result == 0)
            error = map_fetched(client, block, ica, true);
        else {
            ica_free(ica);
            error = swap_in(client, block); /* tries the replicas again, or reports */
        }
    } else {
        error = swap_in(client, block);
    }
    return error;
}

/* Fault-around: how many blocks right after `block` were fetched ahead and are already here
 * (at most FAULT_AROUND_MAX, and a quarter of the limit). */
static uint32_t arrived_ahead(const struct client *client, uint32_t block)
{
    uint32_t most =
        client->limit_blocks / 4 < FAULT_AROUND_MAX ? client->limit_blocks / 4 : FAULT_AROUND_MAX;
    uint32_t count = 0;
    while (count < most && block + 1 + count < client->block_count &&
           client->state[block + 1 + count] == BLOCK_ON_BACKEND &&
           readahead_arrived(client, block + 1 + count))
        count++;
    return count;
}

/* Maps those blocks now, as if their faults had come (room was made for them with the
 * faulted block's): each fault saved is a round trip through the kernels and two
 * address-space switches. Read-ahead goes on from the last one mapped. */
static void map_arrived_ahead(struct client *client, uint32_t block, uint32_t count)
{
    for (uint32_t next = block + 1; next <= block + count; next++) {
        uint64_t ica;
        long result;
        if (client->state[next] != BLOCK_ON_BACKEND || !readahead_take(client, next, &ica, &result))
            return;
        if (result != 0) {
            ica_free(ica); /* its own fault fetches it again, from another replica if need be */
            return;
        }
        if (map_fetched(client, next, ica, false) != 0) /* never evicts the faulted block */
            return;
        readahead_after_fault(client, next);
    }
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
    uint32_t ahead = arrived_ahead(client, block);
    long error = make_room(client, 1 + ahead); /* before the block is in: never its own victim */
    if (error == 0)
        error = swap_in_or_take(client, block);
    if (error == 0)
        map_arrived_ahead(client, block, ahead);
    return error;
}

long prefetch_range(struct client *client, uint64_t address, uint64_t bytes)
{
    uint32_t first, last, fetched = 0, budget = client->limit_blocks / 2;
    if (!policy_block_range(client->base, client->bytes, client->block_bytes, address, bytes,
                            &first, &last))
        return 0;
    if (client->readahead != NULL) /* several blocks in flight at once */
        return readahead_range(client, first, last, budget);
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
