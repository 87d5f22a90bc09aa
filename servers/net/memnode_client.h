/* memnode_client.h: the client side of the memory-node protocol over net.h:
 * negotiate with every node, place blocks first-free over their summed
 * capacity, store and retrieve whole blocks with retransmission. */
#pragma once
#include <formica/memnode_protocol.h>
#include <stdbool.h>
#include <stdint.h>

struct memnode_node {
    uint8_t mac[6];
    uint32_t node_id;
    uint64_t capacity_bytes;
    uint64_t blocks; /* capacity_bytes / block_bytes */
    bool dead;       /* stopped answering: every later call fails at once */
};

struct memnode_client_stats {
    uint64_t stores, retrieves, bytes_stored, bytes_retrieved;
    uint64_t retransmissions, duplicates, frames_ignored;
};

struct memnode_cluster {
    unsigned node_count;
    struct memnode_node nodes[MEMNODE_MAX_NODES];
    uint32_t block_bytes;
    uint8_t mac[6];
    uint32_t sequence;
    uint64_t timeout_us;  /* per window; default 300 ms */
    unsigned retry_limit; /* retransmissions without progress before a node is dead; default 10 */
    struct memnode_placement placement;
    struct memnode_client_stats stats;
};

/* Opens the network device and negotiates: broadcasts NEGOTIATE until
 * `wanted_nodes` distinct nodes answered or `wait_us` passed. Nodes are
 * ordered by node id. 0; -E_NOT_FOUND when fewer answered (node_count says
 * how many; the ones that answered are ready to use); -E_INVALID for a bad
 * block size or a node refusing it; net_open's errors. */
long memnode_cluster_open(struct memnode_cluster *cluster, unsigned wanted_nodes,
                          uint32_t block_bytes, uint64_t wait_us);
/* First-free slot over all nodes (-1 when all are full), and where it lives. */
int64_t memnode_slot_allocate(struct memnode_cluster *cluster);
void memnode_slot_free(struct memnode_cluster *cluster, uint64_t slot);
/* Stores / retrieves one block_bytes block at `slot`. 0; -E_IO when the node
 * does not answer within retry_limit retransmissions (it is marked dead);
 * -E_INVALID for a slot outside the capacity. */
long memnode_store(struct memnode_cluster *cluster, uint64_t slot, const void *data);
long memnode_retrieve(struct memnode_cluster *cluster, uint64_t slot, void *data);
