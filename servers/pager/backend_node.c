/* backend_node.c: the memory-node backend (seed 004 §3.4): other Formica
 * machines in the memory-node role, reached over virtio-net with the
 * protocol of servers/net/memnode_client.c. The pager negotiates with every
 * node that answers; capacity is the sum; blocks go first-free. A node that
 * stops answering makes the transfer fail with -E_IO, which ends the client
 * with a report (the fault cannot be served) and nothing else. */
#include "../net/memnode_client.h"
#include "pager.h"
#include <formica/errors.h>
#include <formica/ica.h>
#include <formica/request.h>
#include <stdio.h>

#define NEGOTIATION_WAIT_US 2000000ull

static struct {
    bool open;
    struct memnode_cluster cluster;
    uint64_t promised_blocks; /* capacity promised to attached clients */
} nodes;

static uint64_t total_blocks(void)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < nodes.cluster.node_count; i++)
        if (!nodes.cluster.nodes[i].dead)
            total += nodes.cluster.nodes[i].blocks;
    return total;
}

/* Negotiates once, with the first client's block size: any node that
 * answers within the wait is used (fewer than the maximum is normal). */
static long open_cluster(uint32_t block_bytes)
{
    if (nodes.open)
        return nodes.cluster.block_bytes == block_bytes ? 0 : -E_INVALID;
    long error =
        memnode_cluster_open(&nodes.cluster, MEMNODE_MAX_NODES, block_bytes, NEGOTIATION_WAIT_US);
    if (error == -E_NOT_FOUND && nodes.cluster.node_count > 0)
        error = 0;
    if (error != 0) {
        printf("pager: no memory node answered: %s\n", error_text(error));
        return error;
    }
    nodes.open = true;
    printf("pager: %u memory node(s), %lu blocks of %u bytes in all\n", nodes.cluster.node_count,
           (unsigned long)total_blocks(), block_bytes);
    return 0;
}

static long node_attach(struct client *client)
{
    long error = open_cluster(client->block_bytes);
    if (error == -E_INVALID)
        printf("pager: memory nodes were negotiated for %u-byte blocks, not %u\n",
               nodes.cluster.block_bytes, client->block_bytes);
    if (error != 0)
        return error;
    if (nodes.promised_blocks + client->block_count > total_blocks())
        return -E_NO_SPACE;
    nodes.promised_blocks += client->block_count;
    return 0;
}

static long node_store(struct client *client, uint32_t block, uint64_t data_ica)
{
    if (client->slot[block] == PAGER_NO_SLOT) {
        int64_t slot = memnode_slot_allocate(&nodes.cluster);
        if (slot < 0) {
            ica_free(data_ica);
            return -E_NO_SPACE;
        }
        client->slot[block] = (uint32_t)slot;
    }
    long result = memnode_store(&nodes.cluster, client->slot[block], ica_address(data_ica));
    ica_free(data_ica);
    if (result != 0)
        printf("pager: storing block %u of pid %u on a memory node failed: %s\n", block,
               client->pid, error_text(result));
    store_completed(client, block, result);
    return result;
}

static long node_retrieve(struct client *client, uint32_t block, uint64_t data_ica)
{
    long result = memnode_retrieve(&nodes.cluster, client->slot[block], ica_address(data_ica));
    if (result != 0)
        printf("pager: retrieving block %u of pid %u from a memory node failed: %s\n", block,
               client->pid, error_text(result));
    return result;
}

static long node_wait_one(void)
{
    return -E_NOT_FOUND; /* the client library finishes each transfer before returning */
}

static void node_detach(struct client *client, bool keep_contents)
{
    (void)keep_contents; /* memory nodes keep nothing across a client's end */
    for (uint32_t block = 0; block < client->block_count; block++)
        if (client->slot[block] != PAGER_NO_SLOT)
            memnode_slot_free(&nodes.cluster, client->slot[block]);
    nodes.promised_blocks -= client->block_count;
}

const struct backend backend_node = {
    .name = "node",
    .kind = PAGER_BACKEND_NODE,
    .attach = node_attach,
    .store = node_store,
    .retrieve = node_retrieve,
    .wait_one = node_wait_one,
    .detach = node_detach,
};
