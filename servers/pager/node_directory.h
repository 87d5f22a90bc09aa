/* node_directory.h: the memory nodes numbered by node id (`memnode --id`),
 * in the order the pager first met them. The replica table names each copy
 * as (directory number, block on that node), which a new negotiation does
 * not change, so a restarted pager reads its copies back (docs/recovery.md). */
#pragma once
#include <formica/memnode_client.h>
#include <stdbool.h>
#include <stdint.h>

#define NODE_COPY_NONE 0xffffffffu
#define NODE_COPY_BLOCK_BITS 28 /* a copy: directory number << 28 | block on the node */

struct node_directory {
    uint32_t count;
    uint32_t ids[MEMNODE_MAX_NODES];
};

/* Uses `kept` (the kept region's, or NULL for a private one); a fresh
 * directory forgets the nodes it knew. */
void node_directory_open(struct node_directory *kept, bool fresh);
/* Nodes known before this negotiation (a restarted pager waits for them). */
uint32_t node_directory_known(void);
/* Numbers the negotiated cluster's nodes (new ids are added); false when the
 * directory is full and a node cannot be named. */
bool node_directory_learn(const struct memnode_cluster *cluster);
/* The copy naming `slot` of the cluster, or NODE_COPY_NONE. */
uint32_t node_directory_copy(const struct memnode_cluster *cluster, uint64_t slot);
/* The cluster slot `copy` names, or -1 when its node is not in the cluster. */
int64_t node_directory_slot(const struct memnode_cluster *cluster, uint32_t copy);
/* The node id of the node `copy` is on. */
uint32_t node_directory_id(uint32_t copy);
