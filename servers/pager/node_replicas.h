/* node_replicas.h: the memory-node backend's state and its replica table:
 * where each copy of each block lives, placing copies on distinct live
 * nodes, forgetting copies on a dead node, re-replicating them, reporting
 * blocks that lost every copy (docs/pager.md, "Replication"). */
#pragma once
#include <formica/memnode_client.h>
#include "pager.h"
#include <stdbool.h>
#include <stdint.h>

#define NODE_OPERATIONS 48 /* block stores and retrieves in flight (each may be several copies) */

struct node_operation {
    bool used, done;
    uint8_t kind; /* MEMNODE_TRANSFER_STORE or _RETRIEVE */
    struct client *client;
    uint32_t block;
    uint64_t data_ica;
    unsigned outstanding; /* store: copies still in flight */
    unsigned copies_ok;
    unsigned replica; /* retrieve: the copy being read */
    long transfer;    /* retrieve: its memnode transfer id */
    long result;
};

struct node_state {
    bool open;
    struct memnode_cluster cluster;
    uint64_t promised_blocks; /* capacity promised to attached clients (times replicas) */
    uint64_t stores_pending, retrieves_pending;
    struct node_operation operations[NODE_OPERATIONS];
    uint64_t copies_lost, blocks_lost, copies_repaired;
};

extern struct node_state node_backend;

long node_replicas_attach(struct client *client);
/* After a pager restart: the kept client's copies marked used in the new
 * negotiation's placement; copies on nodes that did not answer are forgotten
 * and reported (re-replicated from a live copy, else lost at the fault). */
long node_replicas_take_back(struct client *client);
void node_replicas_detach(struct client *client);
/* Gives every copy of `block` a slot on a distinct live node (keeps the ones it has). */
long node_replicas_place(struct client *client, uint32_t block);
/* The slot of copy `replica`, or PAGER_NO_SLOT. */
uint32_t node_replicas_slot(const struct client *client, uint32_t block, unsigned replica);
/* The copy at `slot` could not be written: forget it. */
void node_replicas_copy_failed(struct client *client, uint32_t block, uint64_t slot);
/* memnode_cluster.node_died: forget every copy on `node`, report the damage. */
void node_replicas_node_died(struct memnode_cluster *cluster, unsigned node);
/* A block none of whose copies could be read: a clear report. */
void node_replicas_report_lost(const struct client *client, uint32_t block);
/* Copies up to `budget` blocks that lost a copy to a live node; the number copied. */
unsigned node_replicas_repair(unsigned budget);
bool node_replicas_need_repair(void);
/* Live copies of `block`. */
unsigned node_replicas_live(const struct client *client, uint32_t block);
