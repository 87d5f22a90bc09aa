/* memnode_one_sided.h: a client's one-sided access to a memory node's NVM
 * store (docs/memnode.md, "One-sided access"): the node's NVDIMM file seen
 * through an ivshmem BAR, checked against the layout and identity the
 * negotiation gave, then blocks stored (data persisted, fence, tag
 * persisted: the node's own order, lib/memnode_store.c) and retrieved
 * (checked against the tag) with no CPU of the node involved. Pure apart
 * from the flush layer: host-testable. */
#pragma once
#include <formica/memnode_protocol.h>
#include <formica/memnode_store.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct memnode_one_sided {
    bool on;                    /* checked: transfers to this node go through it */
    struct memnode_store store; /* a view of the node's store (memnode_store_view) */
    uint64_t physical;          /* the BAR's address (for the logs) */
    uint64_t bar_bytes;
    uint64_t limit_bytes; /* data bytes the node serves: its capacity */
    uint8_t cluster[MEMNODE_CLUSTER_BYTES];
    uint32_t node_id;
    uint64_t stores, retrieves, corrupt;
};

/* Checks the store at `base` (a BAR of `bar_bytes`) against what the node
 * said: its layout, cluster, node id, generation and capacity. true and
 * `side` ready, or false with the reason in `why`. Writes nothing. */
bool memnode_one_sided_open(struct memnode_one_sided *side, uint8_t *base, uint64_t bar_bytes,
                            const struct memnode_layout *layout,
                            const struct memnode_capacity *capacity, char *why, size_t why_bytes);
/* The generation of the store's newest valid header of this node, 0 when
 * none is (the node is formatting, or its NVM is not this node's now). */
uint64_t memnode_one_sided_generation(const struct memnode_one_sided *side);
/* Block `block` of `bytes` as a start unit of the store: 0, or -E_INVALID
 * when it is not whole units or lies beyond what the node serves. */
long memnode_one_sided_locate(const struct memnode_one_sided *side, uint64_t block, uint32_t bytes,
                              uint64_t *start_unit);
/* Stores the block: its bytes written and flushed, one fence, then its tag
 * cleared, written and sealed, each persisted. 0 or -E_INVALID. */
long memnode_one_sided_store(struct memnode_one_sided *side, uint64_t block, uint32_t bytes,
                             const void *data, uint32_t sequence);
/* Copies the block out and checks the copy against its tag: MEMNODE_HELD,
 * or NOT_HELD (no tag of that start and size, or out of range) or TORN (the
 * bytes fail the tag's checksum): never served as good then. */
enum memnode_store_held memnode_one_sided_retrieve(struct memnode_one_sided *side, uint64_t block,
                                                   uint32_t bytes, void *data);
