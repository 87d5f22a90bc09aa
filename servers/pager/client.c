/* client.c: the pager's clients (one pager region per process): PAGER_INIT
 * checks the configuration and builds the block table, PAGER_CLEANUP drains
 * and reports the counters as @json, PAGER_STATS reads them. */
#include "pager.h"
#include <formica/json.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_RESIDENT_BLOCKS 4 /* one instruction may touch several blocks */

static struct client clients[PAGER_CLIENTS];

struct client *client_find(uint32_t pid)
{
    for (int i = 0; i < PAGER_CLIENTS; i++)
        if (clients[i].used && clients[i].pid == pid)
            return &clients[i];
    return NULL;
}

static bool process_alive(uint32_t pid)
{
    static struct process_info list[64];
    long count = process_list(list, 64);
    for (long i = 0; i < count; i++)
        if (list[i].pid == pid && list[i].state != PROCESS_ZOMBIE)
            return true;
    return count < 0; /* cannot tell: keep it */
}

static void client_free_tables(struct client *client)
{
    free(client->state);
    free(client->has_copy);
    free(client->slot);
    free(client->links);
    memset(client, 0, sizeof(*client));
}

/* Forgets a client whose process is gone (it never sent PAGER_CLEANUP). */
static void client_forget(struct client *client)
{
    wait_for_stores(client);
    client->backend->detach(client, client->persistent_key != 0);
    client_free_tables(client);
}

static struct client *client_slot_for(uint32_t pid)
{
    struct client *old = client_find(pid);
    if (old != NULL)
        client_forget(old); /* a new process with a reused pid */
    for (int i = 0; i < PAGER_CLIENTS; i++)
        if (clients[i].used && !process_alive(clients[i].pid))
            client_forget(&clients[i]);
    for (int i = 0; i < PAGER_CLIENTS; i++)
        if (!clients[i].used)
            return &clients[i];
    return NULL;
}

static bool power_of_two(uint64_t value)
{
    return value != 0 && (value & (value - 1)) == 0;
}

static long check_configuration(const struct pager_init_message *asked)
{
    uint64_t block = asked->block_bytes;
    if (!power_of_two(block) || block < PAGER_BLOCK_MIN_BYTES || block > PAGER_BLOCK_MAX_BYTES)
        return -E_INVALID;
    if (asked->bytes < block || asked->bytes > PAGER_REGION_MAX_BYTES || asked->base % block != 0)
        return -E_INVALID;
    if (asked->policy != PAGER_POLICY_LRU && asked->policy != PAGER_POLICY_FIFO)
        return -E_INVALID;
    return backend_of_kind(asked->backend) == NULL ? -E_INVALID : 0;
}

static long client_allocate_tables(struct client *client)
{
    uint32_t count = client->block_count;
    client->state = calloc(count, 1);
    client->has_copy = calloc(count, 1);
    client->slot = malloc((size_t)count * sizeof(uint32_t));
    client->links = malloc((size_t)count * sizeof(struct policy_link));
    if (client->state == NULL || client->has_copy == NULL || client->slot == NULL ||
        client->links == NULL)
        return -E_NO_MEMORY;
    for (uint32_t block = 0; block < count; block++)
        client->slot[block] = PAGER_NO_SLOT;
    return 0;
}

static void client_configure(struct client *client, uint32_t pid,
                             const struct pager_init_message *asked)
{
    client->used = true;
    client->pid = pid;
    client->base = asked->base;
    client->block_bytes = asked->block_bytes;
    client->block_count = (uint32_t)(asked->bytes / client->block_bytes);
    client->bytes = (uint64_t)client->block_count * client->block_bytes;
    uint64_t limit_blocks = asked->limit_bytes / client->block_bytes;
    client->limit_blocks =
        limit_blocks < MIN_RESIDENT_BLOCKS ? MIN_RESIDENT_BLOCKS : (uint32_t)limit_blocks;
    client->backend = backend_of_kind(asked->backend);
    client->persistent_key = asked->persistent_key;
    client->backend_entry = -1;
    uint64_t limit_bytes = (uint64_t)client->limit_blocks * client->block_bytes;
    inflight_init(&client->inflight,
                  asked->inflight_bytes != 0 ? asked->inflight_bytes : limit_bytes / 8);
}

long client_init(uint32_t pid, const struct pager_init_message *asked)
{
    long error = check_configuration(asked);
    struct client *client = error == 0 ? client_slot_for(pid) : NULL;
    if (error != 0)
        return error;
    if (client == NULL)
        return -E_BUSY;
    client_configure(client, pid, asked);
    error = client_allocate_tables(client);
    if (error == 0)
        policy_init(&client->policy, asked->policy, client->block_count, client->links);
    long attached = error == 0 ? client->backend->attach(client) : error;
    if (attached < 0) {
        client_free_tables(client);
        return attached;
    }
    printf("pager: pid %u region %lu KiB, block %u KiB, limit %u blocks, %s, %s%s\n", pid,
           client->bytes >> 10, client->block_bytes >> 10, client->limit_blocks,
           asked->policy == PAGER_POLICY_LRU ? "lru" : "fifo", client->backend->name,
           attached > 0 ? " (previous contents reattached)" : "");
    return attached;
}

/* Persistent contents: every resident block goes to the backend now. */
static long flush_resident(struct client *client)
{
    for (uint32_t block = 0; block < client->block_count; block++) {
        if (client->state[block] != BLOCK_RESIDENT)
            continue;
        long error = evict_block(client, block, false);
        if (error != 0)
            return error;
    }
    return wait_for_stores(client);
}

static void print_counters(const struct client *client)
{
    const struct pager_counters *c = &client->counters;
    printf("@json {\"kind\":\"pager\",\"pid\":%u,\"backend\":", client->pid);
    json_print_string(client->backend->name);
    printf(",\"policy\":\"%s\",\"block_bytes\":%u,\"local_limit_bytes\":%lu,"
           "\"swap_in_blocks\":%lu,\"swap_out_blocks\":%lu,\"clean_drops\":%lu,"
           "\"zero_fills\":%lu,\"bytes_in\":%lu,\"bytes_out\":%lu,\"peak_inflight_bytes\":%lu}\n",
           client->policy.kind == PAGER_POLICY_LRU ? "lru" : "fifo", client->block_bytes,
           (uint64_t)client->limit_blocks * client->block_bytes, c->swap_in_blocks,
           c->swap_out_blocks, c->clean_drops, c->zero_fills, c->bytes_in, c->bytes_out,
           client->inflight.peak);
}

long client_cleanup(uint32_t pid)
{
    struct client *client = client_find(pid);
    if (client == NULL)
        return -E_NOT_FOUND;
    long error = wait_for_stores(client);
    if (client->persistent_key != 0 && error == 0)
        error = flush_resident(client);
    print_counters(client);
    client->backend->detach(client, client->persistent_key != 0 && error == 0);
    client_free_tables(client);
    return error;
}

long client_stats(uint32_t pid, struct pager_stats_message *answer)
{
    struct client *client = client_find(pid);
    if (client == NULL)
        return -E_NOT_FOUND;
    const struct pager_counters *c = &client->counters;
    *answer = (struct pager_stats_message){
        .swap_in_blocks = c->swap_in_blocks,
        .swap_out_blocks = c->swap_out_blocks,
        .bytes_in = c->bytes_in,
        .bytes_out = c->bytes_out,
        .clean_drops = c->clean_drops,
        .resident_bytes = (uint64_t)policy_resident_count(&client->policy) * client->block_bytes,
        .peak_inflight_bytes = client->inflight.peak,
        .zero_fills = c->zero_fills,
    };
    return 0;
}
