/* memnode_store.h: a memory node's store in its NVDIMM (docs/memnode.md,
 * "Persistent nodes"): unit 0 holds a pair of FORMNODE identity headers
 * (cluster id and node id, generation), then one tag per 4 KiB data unit,
 * then the data. Every durable update goes through the flush layer in the
 * order the design states. Pure apart from nvm_persist: host-testable. */
#pragma once
#include <formica/memnode_protocol.h>
#include <formica/nvm_identity.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEMNODE_STORE_MAGIC 0x45444f4e4d524f46ull /* "FORMNODE" */
#define MEMNODE_STORE_VERSION 1u
#define MEMNODE_STORE_UNIT 4096u
#define MEMNODE_CLUSTER_BYTES 16u
#define MEMNODE_STORE_IDENTITY (MEMNODE_CLUSTER_BYTES + 4u) /* cluster id, node id */

/* The tag of the block that starts at data unit `start_unit`. */
struct memnode_tag {
    uint64_t start_unit;
    uint32_t bytes;         /* the block's size */
    uint32_t sequence;      /* of the store that wrote it */
    uint64_t kept_checksum; /* of the block's bytes */
    uint64_t valid;         /* 0, or memnode_tag_seal of the fields above */
};
_Static_assert(sizeof(struct memnode_tag) == 32, "a tag is 32 bytes");

struct memnode_store {
    uint8_t *base;
    uint64_t device_bytes;
    struct nvm_identity *headers; /* the pair in unit 0 */
    struct memnode_tag *tags;     /* one per data unit */
    uint8_t *data;
    uint64_t units; /* data units of MEMNODE_STORE_UNIT bytes */
    uint64_t generation;
    uint64_t blocks_found; /* valid tags at open */
    uint8_t cluster[MEMNODE_CLUSTER_BYTES];
    uint32_t node_id;
};

enum memnode_store_opened {
    MEMNODE_STORE_FORMATTED = 0, /* blank NVM: laid out afresh (generation 1) */
    MEMNODE_STORE_FOUND = 1,     /* ours: generation incremented, tags kept */
    MEMNODE_STORE_FOREIGN = 2,   /* another cluster's or node's: not served */
    MEMNODE_STORE_CORRUPT = 3,   /* a header or tag fails its checksum: not served */
};

enum memnode_store_held {
    MEMNODE_HELD = 0,     /* a valid tag of this size, and the bytes match its checksum */
    MEMNODE_NOT_HELD = 1, /* no valid tag of this start and size */
    MEMNODE_TORN = 2,     /* a tag, but the bytes do not match it (a store cut by a crash) */
};

/* The seal a valid tag carries (never 0). */
uint64_t memnode_tag_seal(const struct memnode_tag *tag);
/* Data units a device of `device_bytes` holds beside its headers and tags. */
uint64_t memnode_store_units(uint64_t device_bytes);
/* Opens the store at `base`: formats a blank device, else checks the
 * identity (cluster id, node id) and every tag and increments the
 * generation. FOREIGN and CORRUPT write nothing and say why in `why`. */
enum memnode_store_opened memnode_store_open(struct memnode_store *store, uint8_t *base,
                                             uint64_t device_bytes,
                                             const uint8_t cluster[MEMNODE_CLUSTER_BYTES],
                                             uint32_t node_id, char *why, size_t why_bytes);
/* A fragment's bytes at `offset` of the data area, copied and flushed (no fence). */
void memnode_store_write(struct memnode_store *store, uint64_t offset, const void *bytes,
                         size_t length);
/* The block at `start_unit` is complete: one fence, then its tag, persisted. */
void memnode_store_commit(struct memnode_store *store, uint64_t start_unit, uint32_t bytes,
                          uint32_t sequence);
/* The same with the block's checksum given: a one-sided client sums the
 * bytes it sent, not what another machine may have changed since. */
void memnode_store_commit_sum(struct memnode_store *store, uint64_t start_unit, uint32_t bytes,
                              uint32_t sequence, uint64_t sum);
/* Whether the block of `bytes` at `start_unit` may be served. */
enum memnode_store_held memnode_store_check(const struct memnode_store *store, uint64_t start_unit,
                                            uint32_t bytes);
/* The same check against `copy`, the block's bytes as read out of the store
 * (a one-sided retrieve checks what it serves, not the store a second time). */
enum memnode_store_held memnode_store_check_copy(const struct memnode_store *store,
                                                 uint64_t start_unit, uint32_t bytes,
                                                 const void *copy);
/* Where an opened store keeps its tags and data (a NEGOTIATE_REPLY's layout). */
void memnode_store_layout(const struct memnode_store *store, struct memnode_layout *layout);
/* Places a store another machine opened at `base` from its layout, writing
 * nothing: false when the layout is not the one this code gives a device
 * of its size (another format). Used by a one-sided client. */
bool memnode_store_view(struct memnode_store *store, uint8_t *base,
                        const struct memnode_layout *layout);
/* "0123...ef": the 32 hex digits of a cluster id (`text` of 33 bytes). */
void memnode_cluster_text(const uint8_t cluster[MEMNODE_CLUSTER_BYTES], char text[33]);
/* The cluster id from 32 hex digits; false when `text` is not that. */
bool memnode_cluster_parse(const char *text, uint8_t cluster[MEMNODE_CLUSTER_BYTES]);
