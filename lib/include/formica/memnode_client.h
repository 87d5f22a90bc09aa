/* memnode_client.h: the client side of the memory-node protocol over net.h:
 * negotiate with every node, place blocks first-free over their summed
 * capacity, and move whole blocks with asynchronous transfers (several in
 * flight per node and across nodes), retransmission with back-off, and the
 * liveness rule that alone declares a node dead (docs/memnode.md). While
 * this machine's link is down every node is unreachable: transfers wait,
 * nothing is declared dead, and they go on when the link returns. */
#pragma once
#include <formica/memnode_liveness.h>
#include <formica/memnode_one_sided.h>
#include <formica/memnode_protocol.h>
#include <stdbool.h>
#include <stdint.h>

#define MEMNODE_MAX_TRANSFERS 32     /* transfers in flight at once (all nodes) */
#define MEMNODE_SETTLE_US 3000000ull /* negotiation goes on this long after the first answer */

struct memnode_node {
    uint8_t mac[6];
    uint32_t node_id;
    uint64_t capacity_bytes;
    uint64_t blocks; /* capacity_bytes / block_bytes */
    bool dead;       /* silent past the liveness deadline: every later call fails at once */
    struct memnode_liveness liveness;
    unsigned active;           /* transfers in flight to it */
    uint32_t store_credit;     /* store fragments it may still be sent (flow control) */
    uint32_t largest_fragment; /* what it said it takes in its NEGOTIATE_REPLY */
    uint32_t probe_sequence;   /* of the last PING */
    uint64_t stores, retrieves, retransmissions, probes, pongs;
    /* Restarts (docs/memnode.md, "Persistent nodes"): what its last
     * NEGOTIATE_REPLY or PONG said, and a renegotiation in progress. */
    uint64_t generation;
    bool persistent;
    uint8_t cluster[16];
    bool renegotiating; /* it restarted: its transfers wait for its NEGOTIATE_REPLY */
    uint32_t renegotiate_sequence;
    uint64_t renegotiate_sent;
    uint64_t restarts_kept;  /* restarts after which its blocks were kept */
    const char *lost_reason; /* why it is dead when it answers (NULL: silent) */
    /* One-sided access (boot option memnode_ivshmem=on, memnode_ivshmem.c):
     * what it negotiated, and its store seen through an ivshmem BAR. */
    struct memnode_capacity negotiated;
    bool has_layout; /* its NEGOTIATE_REPLY carried its store's layout */
    struct memnode_layout layout;
    struct memnode_one_sided one_sided; /* .on: its transfers are memcpy, not frames */
    int shared_bar;                     /* the BAR it was found in (-1: none) */
    char two_sided_why[96];             /* why not one-sided, when it was wanted */
};

struct memnode_client_stats {
    uint64_t stores, retrieves, bytes_stored, bytes_retrieved;
    uint64_t retransmissions, duplicates, frames_ignored, probes, slow_waits;
    uint64_t peak_in_flight;
};

enum memnode_transfer_kind { MEMNODE_TRANSFER_STORE = 1, MEMNODE_TRANSFER_RETRIEVE = 2 };

/* One block moving to or from a node. */
struct memnode_transfer {
    uint8_t kind; /* 0: free */
    bool done;    /* finished: waits for memnode_collect / memnode_wait */
    bool window_open;
    long result;
    unsigned node;
    uint64_t slot, tag;
    uint8_t *data;
    struct memnode_reassembly progress; /* fragments acknowledged (store) or received */
    uint16_t window_fragments;          /* credit held by the open window */
    uint64_t deadline, timeout;
    uint64_t window_sent; /* when the open window went out (round-trip samples) */
    bool retransmitted;   /* since the last progress: no round-trip sample (Karn) */
};

struct memnode_completion {
    uint64_t tag;
    uint8_t kind;
    long result; /* 0; -E_IO (the node is dead or lost its blocks); -E_INVALID (refused);
                    -E_CORRUPT (the node's copy fails its tag) */
    uint64_t slot;
};

struct memnode_cluster {
    unsigned node_count;
    struct memnode_node nodes[MEMNODE_MAX_NODES];
    uint32_t block_bytes;
    uint32_t fragment_bytes; /* 1 KiB; up to 8 KiB with jumbo frames, 32 KiB at MTU 32800 */
    uint8_t mac[6];
    uint32_t sequence;
    uint64_t timeout_us;    /* retransmission timeout before a round trip was measured (100 ms) */
    uint64_t srtt_us;       /* smoothed round trip of a window; the timeout is 4 x that */
    uint64_t dead_after_us; /* liveness deadline; default MEMNODE_DEAD_AFTER_US */
    uint32_t window_bytes;  /* one transfer's window; default 64 KiB */
    uint32_t node_credit_bytes;    /* store bytes in flight to one node; default 128 KiB */
    uint32_t receive_credit_bytes; /* retrieve bytes in flight to us; default 128 KiB */
    uint32_t receive_credit;       /* fragments left of it */
    struct memnode_placement placement;
    struct memnode_client_stats stats;
    struct memnode_transfer transfers[MEMNODE_MAX_TRANSFERS];
    unsigned in_flight;
    bool link_down;      /* this machine's card has no link: every node is unreachable */
    uint64_t link_downs; /* times the link went down while the cluster was open */
    void (*node_died)(struct memnode_cluster *cluster, unsigned node); /* optional */
    /* optional: node `node` restarted with its blocks kept (persistent, this cluster's) */
    void (*node_restarted)(struct memnode_cluster *cluster, unsigned node, uint64_t old_generation);
    uint8_t cluster_id[16]; /* the boot option memnode_cluster= (0s when absent) */
    unsigned refused_nodes; /* nodes that answered NEGOTIATE with status 3 (refused) */
    uint8_t refused_macs[MEMNODE_MAX_NODES][6];
    /* optional: the link went down (false) or came back (true) */
    void (*link_changed)(struct memnode_cluster *cluster, bool up);
    bool one_sided_wanted; /* the boot option memnode_ivshmem=on */
};

/* One-sided access (docs/memnode.md, "One-sided access"): with the boot
 * option memnode_ivshmem=on (build/run --memnode-ivshmem) the negotiation
 * asks each node for its store's layout, and memnode_cluster_open looks for
 * the node's store in the ivshmem devices' BAR 2: found and matching, that
 * node's transfers are memcpy into and out of it, with the tags written by
 * the client in the node's order; otherwise the node stays two-sided and
 * `two_sided_why` says why. */
#define MEMNODE_IVSHMEM_OPTION "memnode_ivshmem"
bool memnode_ivshmem_wanted(void);
void memnode_ivshmem_attach(struct memnode_cluster *cluster);
/* After node `node` was negotiated again (it restarted): its store checked
 * once more against the new reply; false (and said) when it is two-sided now. */
bool memnode_ivshmem_recheck(struct memnode_cluster *cluster, unsigned node);

/* One of several client machines (boot option memnode_part=J/N, build/run --memnode-clients):
 * keeps only part J of N of each node's blocks (memnode_placement_keep_part), its nodes'
 * `blocks` set to it; nothing without the option. memnode_cluster_open calls it. */
#define MEMNODE_PART_OPTION "memnode_part"
void memnode_cluster_keep_part(struct memnode_cluster *cluster);
/* Opens the network device and negotiates: broadcasts NEGOTIATE until
 * `wanted_nodes` distinct nodes answered, or `wait_us` passed without any
 * answer, or MEMNODE_SETTLE_US passed since the first one. Nodes are
 * ordered by node id. 0; -E_NOT_FOUND when fewer answered (node_count says
 * how many; the ones that answered are ready to use); -E_INVALID for a bad
 * block size or a node refusing it; net_open's errors. Fragments are 8 KiB
 * (jumbo frames) when the device takes them, else 1 KiB. */
long memnode_cluster_open(struct memnode_cluster *cluster, unsigned wanted_nodes,
                          uint32_t block_bytes, uint64_t wait_us);
/* First-free slot over all nodes (-1 when all are full), and where it lives. */
int64_t memnode_slot_allocate(struct memnode_cluster *cluster);
/* First-free slot on node `node` (-1: full, dead or no such node). */
int64_t memnode_slot_allocate_on(struct memnode_cluster *cluster, unsigned node);
void memnode_slot_free(struct memnode_cluster *cluster, uint64_t slot);
/* The node index of `slot`, or -1. */
int memnode_slot_node(const struct memnode_cluster *cluster, uint64_t slot);
uint64_t memnode_node_free_blocks(const struct memnode_cluster *cluster, unsigned node);

/* Asynchronous transfers of one block_bytes block: the transfer's id, or
 * -E_BUSY (MEMNODE_MAX_TRANSFERS in flight), -E_IO (the node is dead),
 * -E_INVALID (bad slot). `data` must stay valid until the transfer ends. */
long memnode_submit_store(struct memnode_cluster *cluster, uint64_t slot, const void *data,
                          uint64_t tag);
long memnode_submit_retrieve(struct memnode_cluster *cluster, uint64_t slot, void *data,
                             uint64_t tag);
/* Moves every transfer on for up to `timeout_us` (returns early once one
 * has finished): sends windows as flow control allows, takes frames,
 * retransmits, probes silent nodes and declares dead those silent past the
 * deadline (their transfers finish with -E_IO). Finished transfers waiting. */
unsigned memnode_poll(struct memnode_cluster *cluster, uint64_t timeout_us);
/* Sends the first window of every transfer submitted since the last poll, now (flow
 * control allowing), without taking frames or waiting. */
void memnode_send_pending(struct memnode_cluster *cluster);
/* Looks at the card's link (memnode_poll does too): when it went down the
 * nodes become unreachable, when it came back the open windows are sent
 * again at once and the nodes' silence counts from then. */
void memnode_watch_link(struct memnode_cluster *cluster);
/* Takes one finished transfer (true), freeing its entry. */
bool memnode_collect(struct memnode_cluster *cluster, struct memnode_completion *done);
/* Polls until transfer `id` finished; its result (the entry is freed;
 * others that finished meanwhile wait for memnode_collect). */
long memnode_wait(struct memnode_cluster *cluster, long id);
/* Synchronous: submit and wait. 0, -E_IO (node dead), -E_INVALID. */
long memnode_store(struct memnode_cluster *cluster, uint64_t slot, const void *data);
long memnode_retrieve(struct memnode_cluster *cluster, uint64_t slot, void *data);
/* Moves transfer `id` (a retrieve) to replica `slot` on another node. */
long memnode_redirect(struct memnode_cluster *cluster, long id, uint64_t slot);
/* How long transfer `id`'s node has been silent (0 when heard lately). */
uint64_t memnode_transfer_silence(struct memnode_cluster *cluster, long id);
