/* pager.h (server-internal): the pager's clients, their block tables and the
 * backend interface every backend (memory nodes, NVM, disk) implements.
 * docs/pager.md describes the states and the flow of a fault. */
#pragma once
#include "policy.h"
#include <formica/pager.h>
#include <stdbool.h>
#include <stdint.h>

#define PAGER_CLIENTS 16
#define PAGER_NO_SLOT 0xffffffffu
#define PAGER_UNIT_BYTES 4096u        /* backend space is counted in 4 KiB units */
#define PAGER_MAX_IN_FLIGHT_STORES 16 /* the pager may hold 64 ICAs in all */
#define PAGER_MIN_RESIDENT_BLOCKS 4   /* one instruction may touch several blocks */
/* The pager's own limit: a client's block tables on its heap (client_quota.c). */
#define PAGER_TABLE_MAX_BYTES (4u << 20)

enum block_state {
    BLOCK_UNTOUCHED = 0, /* never used: a fault maps fresh zeroed frames */
    BLOCK_RESIDENT,      /* mapped in the process */
    BLOCK_ON_BACKEND,    /* only the backend copy exists (slot[] says where) */
    BLOCK_STORING,       /* unmapped, its store to the backend in flight */
};

struct pager_counters {
    uint64_t swap_in_blocks, swap_out_blocks, bytes_in, bytes_out;
    uint64_t clean_drops, zero_fills;
    uint64_t fetch_wait_us;     /* faults' time waiting for the backend's blocks */
    uint64_t readahead_fetches; /* blocks fetched before their fault */
    uint64_t readahead_unused;  /* of those, dropped without a fault taking them */
};

struct backend;

struct client {
    bool used;
    uint32_t pid;
    uint32_t uid, account;  /* the kernel-stamped user and quota account of its PAGER_INIT */
    uint64_t charged_bytes; /* its block tables, charged to its account (client_quota.c) */
    uint64_t base, bytes;
    uint32_t block_bytes, block_count, limit_blocks;
    uint64_t persistent_key;
    uint32_t replicas; /* memory nodes: copies of each block (1 unless asked) */
    const struct backend *backend;
    uint8_t *state;    /* enum block_state per block */
    uint8_t *has_copy; /* the backend's copy matches the block unless it is dirty */
    uint32_t *slot;    /* backend location (unit index) or PAGER_NO_SLOT */
    uint64_t *sum;     /* checksum of each block's last store, checked at swap-in */
    uint32_t *copies;  /* kept only: memory nodes' replica table (node_replicas.c) */
    struct policy_link *links;
    struct policy_state policy;
    struct inflight_bound inflight;
    struct pager_counters counters;
    int backend_entry;           /* the backend's own record for this client (NVM key entry) */
    struct readahead *readahead; /* blocks being fetched ahead of their fault (readahead.c) */
    bool kept;          /* state, has_copy and slot live in the kept region (kept_tables.c) */
    bool adopt_pending; /* kept across a pager restart: residency not checked yet */
};

/* One implementation per backend file. Blocks live in `slot` units the
 * backend chooses (first-free). store takes the data ICA over: the backend
 * frees it once the copy is made and calls store_completed(). */
struct backend {
    const char *name;
    uint32_t kind; /* enum pager_backend */
    /* Before anything is allocated for the client: whether its region can be
     * had (the backend present, room for every block, the key its user's). */
    long (*fits)(const struct client *client);
    /* Its whole size in bytes, once fits has found it. */
    uint64_t (*capacity_bytes)(void);
    long (*attach)(struct client *client); /* capacity check; >0: previous contents found */
    long (*store)(struct client *client, uint32_t block, uint64_t data_ica);
    long (*retrieve)(struct client *client, uint32_t block, uint64_t data_ica);
    /* Optional (memory nodes): a retrieve that runs on while the pager does
     * other work, for read-ahead and prefetch: a handle, then its result. */
    long (*fetch_start)(struct client *client, uint32_t block, uint64_t data_ica);
    long (*fetch_finish)(long handle);
    bool (*fetch_ready)(long handle); /* finish would not wait */
    /* Waits for one outstanding store to finish (0), or -E_NOT_FOUND if none. */
    long (*wait_one)(void);
    void (*detach)(struct client *client, bool keep_contents);
    /* Optional: takes a kept client's placed blocks back after a pager restart. */
    long (*reattach)(struct client *client);
};

extern const struct backend backend_node, backend_nvm, backend_disk, backend_block;
const struct backend *backend_of_kind(uint32_t kind);
/* Backend work that runs on between requests (memory-node stores in flight). */
bool backends_busy(void);
void backends_progress(void);
/* Transfers a request submitted leave now, not at the pager's next wake. */
void backends_send_submitted(void);
/* True when the pager may sleep until a request, a result or the network
 * device's interrupt (ica_receive with ICA_OR_IRQ): nothing has arrived. */
bool backends_may_sleep(void);

/* Called by a backend when a store of `block` of `client` finished. */
void store_completed(struct client *client, uint32_t block, long result);

/* A result (of an asynchronous backend request) arrived in the main loop. */
void backend_result_arrived(uint64_t control);

/* Kernel calls (syscalls 40-45). */
long pager_map(uint32_t pid, uint64_t address, uint64_t bytes, uint64_t data_ica);
long pager_unmap(uint32_t pid, uint64_t address, uint64_t bytes, bool keep);
long pager_scan(uint32_t pid, uint64_t address, uint64_t bytes, uint32_t flags);

/* Clients (client.c). */
struct pager_requester {
    uint32_t pid, uid, account; /* stamped by the kernel into the request */
};
struct client *client_find(uint32_t pid);
long client_init(const struct pager_requester *who, const struct pager_init_message *asked);
/* A live client (the asking one included) whose region is `backend`'s persistent `key`, or NULL. */
const struct client *client_with_key(uint32_t backend, uint64_t key);
long client_cleanup(uint32_t pid);
long client_stats(uint32_t pid, struct pager_stats_message *answer);
/* After a restart: takes back the kept clients still alive, frees the others. */
void clients_restore(void);
/* Keeps every client's counters in the kept region (after each request). */
void clients_keep_counters(void);
/* A restored client's first fault: which kept blocks are still mapped. */
long client_adopt(struct client *client);
/* PAGER_REPORT: one @json "pagerstat" line per client and one "pagernode" per
 * memory node; the number of clients. */
long pager_print_report(void);
static inline uint64_t block_address(const struct client *client, uint32_t block)
{
    return client->base + (uint64_t)block * client->block_bytes;
}

/* Read-ahead (readahead.c): sequential faults fetch the next blocks ahead,
 * within the client's in-flight bound; a fault takes a fetched block over. */
long readahead_attach(struct client *client);
void readahead_detach(struct client *client);
/* True and the data ICA when `block` was fetched ahead (its fetch finished). */
bool readahead_take(struct client *client, uint32_t block, uint64_t *data_ica, long *result);
/* True when `block` was fetched ahead and its data is already here. */
bool readahead_arrived(const struct client *client, uint32_t block);
void readahead_after_fault(struct client *client, uint32_t block);
/* Fetches the blocks of [first, last] not resident, several at once; how many. */
long readahead_range(struct client *client, uint32_t first, uint32_t last, uint32_t budget);

/* A line about a refused request of `pid` may be printed now (refusal_log.c). */

/* The client pays (client_quota.c): its block tables are charged to its
 * account before they are allocated, and given back at cleanup. */
uint64_t client_table_bytes(const struct client *client);
long client_charge_tables(struct client *client);
void client_release_charge(struct client *client);
/* Maps a block into the client (data ICA or 0: zeroed frames). Past its
 * account's quota, with may_evict, one of its own blocks is evicted and its
 * limit lowered to what the account holds; with too few blocks left the
 * fault fails with a report. */
long client_map_block(struct client *client, uint32_t block, uint64_t data_ica, bool may_evict);

/* Faults, eviction and hints (fault.c, evict.c). */
long fault_serve(struct client *client, uint64_t address);
/* Checks a fetched block against the checksum of its store and maps it. */
long map_fetched(struct client *client, uint32_t block, uint64_t data_ica, bool may_evict);
/* Evicts the policy's victim among the client's resident blocks. */
long evict_one(struct client *client);
long prefetch_range(struct client *client, uint64_t address, uint64_t bytes);
long drop_range(struct client *client, uint64_t address, uint64_t bytes);
long make_room(struct client *client, uint32_t blocks);
long evict_block(struct client *client, uint32_t block, bool wait_for_store);
long wait_for_stores(struct client *client);
