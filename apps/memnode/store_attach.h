/* store_attach.h: where a memory node keeps its blocks: the NVDIMM whose
 * role the boot option nvm=... names "memnode" (its store opened and
 * checked, lib/memnode_store.c), else DRAM reserved in its heap. */
#pragma once
#include <formica/memnode_store.h>
#include <stdbool.h>
#include <stdint.h>

struct node_store {
    bool persistent; /* in NVM: blocks survive the node's restart */
    bool refused;    /* an NVM that is not this node's: nothing is served */
    uint8_t *memory; /* the data area */
    uint64_t capacity_bytes;
    uint64_t generation;
    uint8_t cluster[MEMNODE_CLUSTER_BYTES];
    struct memnode_store nvm;
};

/* Fills `store` for node `node_id` offering up to `capacity_bytes`: 0, or a
 * negative E_* code (with a line printed) when the node cannot serve at all.
 * A refused NVM is 0 with `refused` set (the node answers, serving nothing). */
long node_store_attach(struct node_store *store, uint32_t node_id, uint64_t capacity_bytes);
