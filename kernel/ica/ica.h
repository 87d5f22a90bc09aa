/* ica.h: the kernel's side of ICAs. The descriptor table lives in shared
 * memory; an ICA is touched only by the core of the process that holds it
 * (or, while it travels, by nobody), so handover needs no lock. Slots and
 * frames are given out and taken back only by the m-kernel. */
#pragma once
#include <formica/ica.h>
#include <stdbool.h>
#include <stdint.h>
#include "process.h"
#include "ring.h"
#include "shared.h"

enum ica_state { ICA_FREE = 0, ICA_HELD, ICA_TRAVELLING };
enum ica_delivery { ICA_AS_REQUEST = 1, ICA_AS_RESULT };

/* Writers: the m-kernel sets generation, kind, pages, physical and
 * allocator when it hands out the slot and clears them when it takes it
 * back; while the ICA lives, the core of whoever holds it writes the rest
 * (one core at a time: the handover is the hand-off). lend_count changes on
 * the cores of the borrowers, so it is _Atomic like state and owner. */
struct ica {
    union {
        struct {
            uint32_t generation;
            _Atomic uint32_t state;
        };
        _Atomic uint64_t generation_and_state; /* both in one load: ica_held_by */
    };
    uint32_t kind;
    uint32_t pages;
    uint64_t physical;
    uint32_t index; /* its slot in the pool of its kind (set at boot, never changes) */
    /* Block ICAs: how many of its lends (lend_count) are mapping lends
     * (mapping_lend.c), which the lender may end (SYS_ICA_REVOKE) to reuse
     * the block. Here, in the hole before user_address: the struct stays
     * 216 bytes, whose multiples the kernel computes in three instructions. */
    _Atomic uint32_t mapping_lend_count;
    uint64_t user_address;        /* where it is mapped in a holder: ica_address of its id */
    _Atomic uint32_t owner;       /* pid holding it (ICA_HELD) */
    _Atomic uint32_t destination; /* pid it travels to (ICA_TRAVELLING) */
    uint32_t allocator;           /* pid that allocated it */
    /* Control ICAs: the kernel's own copy of the routing, not the page's,
     * laid out as the page's arrival .. data_count (ica_write_arrival copies
     * it in one piece). Entries of returns past return_depth are 0. */
    uint32_t delivery __attribute__((aligned(8))); /* enum ica_delivery, for the receiver */
    uint32_t origin;
    uint32_t sender;
    uint32_t sender_rights; /* the sender's RIGHT_* set, or RIGHT_KERNEL for the kernel's own */
    uint32_t sender_uid;    /* the sender's user and group */
    uint32_t sender_gid;
    uint32_t sender_account; /* the sender's quota account: servers' per-account limits */
    uint32_t reserved_routing;
    uint32_t return_depth;
    uint32_t returns[ICA_MAX_RETURNS];
    uint32_t attached_count;
    uint64_t attached[ICA_MAX_ATTACHED];
    /* Control ICAs: data ICAs lent to whoever holds this control ICA now. */
    uint32_t lent_count;
    uint64_t lent[ICA_MAX_ATTACHED];
    /* Data ICAs: how many holders of control ICAs see it lent right now; an
     * ICA whose lender ended is freed when the last lend ends. */
    _Atomic uint32_t lend_count;
    _Atomic uint32_t orphaned;
    uint32_t counted; /* counts against its allocator's ICA_PER_PROCESS */
    /* A block ICA over a driver's persistent memory (SYS_ICA_DEVICE_BLOCK):
     * its frame is never given to the frame allocator. */
    uint32_t device_frame;
};

/* The kernel's routing as the page shows it: struct ica's delivery ..
 * attached_count is the page's arrival .. data_count, field for field. */
#define ICA_ARRIVAL_BYTES                                                                          \
    (__builtin_offsetof(struct ica_control, data_count) + sizeof(uint32_t) -                       \
     __builtin_offsetof(struct ica_control, arrival))
#define SAME_PLACE(kernel_field, page_field)                                                       \
    (__builtin_offsetof(struct ica, kernel_field) - __builtin_offsetof(struct ica, delivery) ==    \
     __builtin_offsetof(struct ica_control, page_field) -                                          \
         __builtin_offsetof(struct ica_control, arrival))
_Static_assert(SAME_PLACE(origin, origin) && SAME_PLACE(sender, sender) &&
                   SAME_PLACE(sender_rights, sender_rights) && SAME_PLACE(sender_uid, sender_uid) &&
                   SAME_PLACE(sender_gid, sender_gid) &&
                   SAME_PLACE(sender_account, sender_account) &&
                   SAME_PLACE(return_depth, return_depth) && SAME_PLACE(returns, returns) &&
                   SAME_PLACE(attached_count, data_count),
               "struct ica's routing is laid out as the page's");
_Static_assert(__builtin_offsetof(struct ica, generation) == 0 &&
                   __builtin_offsetof(struct ica, state) == 4,
               "generation_and_state: the generation in its low half (x86 is little-endian)");
_Static_assert(ICA_ARRIVAL_BYTES % sizeof(uint64_t) == 0, "copied eight bytes a move");
_Static_assert((uint32_t)ICA_AS_REQUEST == ICA_ARRIVED_AS_REQUEST &&
                   (uint32_t)ICA_AS_RESULT == ICA_ARRIVED_AS_RESULT,
               "a delivery is the page's arrival value");
#undef SAME_PLACE

/* A request's route starts at `pid`, the origin its result goes back to. */
static inline void ica_route_start(struct ica *control, uint32_t pid)
{
    for (uint32_t i = 1; i < control->return_depth && i < ICA_MAX_RETURNS; i++)
        control->returns[i] = 0; /* a route left unfinished (its server ended) */
    control->origin = pid;
    control->return_depth = 1;
    control->returns[0] = pid;
}

/* The forwarder `pid` joins the route: the result comes back through it
 * (return_depth below ICA_MAX_RETURNS checked by the caller). */
static inline void ica_route_push(struct ica *control, uint32_t pid)
{
    control->returns[control->return_depth++] = pid;
}

/* The next stop back, taken off the route (return_depth checked by the caller). */
static inline uint32_t ica_route_pop(struct ica *control)
{
    uint32_t pid = control->returns[--control->return_depth];
    control->returns[control->return_depth] = 0;
    return pid;
}

/* A request flag only the kernel sets (a page fault sent to the pager): the
 * request is stamped RIGHT_KERNEL. A process that passes it is refused. */
#define ICA_FROM_KERNEL 0x80000000u

/* Lone servers and tests' names, plus every instance of two servers that
 * run on every core (fs and blk per-core). */
#define SERVER_SLOTS (16 + 2 * SERVER_INSTANCES_MAX)
#define SERVER_NAME_BYTES 16
#define ICA_RING_SLOTS 64
_Static_assert(RING_CAPACITY_VALID(ICA_RING_SLOTS), "ICA_RING_SLOTS is a ring capacity");
_Static_assert(RING_CAPACITY_VALID(RESULT_RING_SLOTS), "RESULT_RING_SLOTS is a ring capacity");
_Static_assert(RESULT_RING_SLOTS > ICA_PER_PROCESS, "a result ring can never overflow");

/* A registered server: one request ring per core, filled by that core only.
 * A slot is one instance of a name (kernel/server_registry.c): it keeps its
 * name, instance and core while the instance restarts (pid 0, "vacant"), so
 * lookups keep answering the same instance; a slot whose name is empty was
 * never used. Only the m-kernel writes the identity, inside an odd version. */
struct server_entry {
    char name[SERVER_NAME_BYTES];
    _Atomic uint32_t pid;     /* 0 = no process registered now */
    _Atomic uint32_t version; /* odd while the m-kernel rewrites name, instance and core */
    uint32_t instance;        /* its index among the name's instances */
    uint32_t core;            /* the core its process runs on */
    uint32_t registrations;   /* times this instance registered (starts and restarts) */
    /* Requests this instance's earlier processes took (their rings' count
     * and their requests_handed, added by the m-kernel as each ended or
     * re-registered; 0 when the slot changes name): the instance counts
     * of SYS_SERVER_INSTANCE_COUNTS span restarts. */
    _Atomic uint64_t requests_before;
    uint32_t ring_stride; /* bytes between the rings of consecutive cores */
    /* core_count rings of ICA_RING_SLOTS ids for clients, then core_count
     * lanes (rings as well) for init's account: the servers' requests to
     * each other, taken before any client's (server_lane). */
    uint8_t *rings;
    uint32_t next_core; /* where the server's next receive starts looking */
    /* Requests pushed into any of the rings (senders add one after each
     * push) and taken out of them (the server alone): equal counts mean
     * every ring is empty, so a receive looks at no ring at all. */
    _Atomic uint64_t pushed __attribute__((aligned(64)));
    _Atomic uint64_t lane_pushed; /* of them, into the lanes (added first) */
    /* The ring the last push went into (server_ring's index: a lane is
     * core_count + core), written before `pushed` grows: a hint that lets a
     * receive with one request pending go straight to it. */
    _Atomic uint32_t last_pushed_ring;
    uint64_t taken __attribute__((aligned(64)));
    uint64_t lane_taken;
    uint32_t next_lane; /* where the next look at the lanes starts */
    /* Bit c: a sender on core c waits for room in ring c (kernel/ica/ica_room.c);
     * set by the senders, cleared by whoever announces the room. */
    _Atomic uint64_t room_wanted[(MAX_CORES + 63) / 64] __attribute__((aligned(64)));
};

struct ica_pools {
    struct ica control[ICA_CONTROL_SLOTS];
    struct ica data[ICA_DATA_SLOTS];
    struct ica block[ICA_BLOCK_SLOTS];
    struct server_entry servers[SERVER_SLOTS];
    /* One past the highest slot of each pool ever handed out (the m-kernel
     * alone writes them, as it hands out slots lowest first): no ICA lives
     * at or above, so a scan of the live ICAs stops there. */
    uint32_t control_reach, data_reach, block_reach;
};

/* The descriptor slot an id names in the pool of its kind (generation and
 * state not checked), or NULL for a kind or index out of range. */
static inline __attribute__((always_inline)) struct ica *ica_slot_of(uint64_t id)
{
    struct ica_pools *pools = kernel_shared->icas;
    uint32_t index = ica_index(id);
    switch (ica_kind(id)) {
    case ICA_KIND_CONTROL:
        return index < ICA_CONTROL_SLOTS ? &pools->control[index] : NULL;
    case ICA_KIND_BLOCK:
        return index < ICA_BLOCK_SLOTS ? &pools->block[index] : NULL;
    case ICA_KIND_DATA:
        return index < ICA_DATA_SLOTS ? &pools->data[index] : NULL;
    }
    return NULL;
}

/* The descriptor for `id` when it is well-formed and current, else NULL. */
static inline __attribute__((always_inline)) struct ica *ica_lookup(uint64_t id)
{
    struct ica *ica = ica_slot_of(id);
    if (ica == NULL || ica->state == ICA_FREE || ica->generation != (uint32_t)(id >> 32))
        return NULL;
    return ica;
}

static inline uint64_t ica_id_of(const struct ica *ica)
{
    return ((uint64_t)ica->generation << 32) | ((uint64_t)ica->kind << 24) | ica->index;
}

static inline uint64_t ica_virtual_address(const struct ica *ica)
{
    return ica->user_address;
}
/* The leaf page table for `address` under `root`, or NULL when a table is
 * missing (the ICA windows' and file regions' tables exist from creation). */
uint64_t *ica_leaf_table(uint64_t root, uint64_t address);
/* Unmaps the ICA from `process` (running on this core) / maps it in. Paste
 * may ask the m-kernel to build the page tables of a new ICA window region. */
void ica_peel(struct process *process, struct ica *ica);
bool ica_paste(struct process *process, struct ica *ica);
/* The block ICA `id` lent to `borrower` right now, through a
 * control ICA it holds (its entry there is the lent one: only a lend writes
 * it, and the end of that lend clears it): 0 and *out; -E_SERVER_ENDED and
 * *out when its lender has ended (what the borrower sees may be stale);
 * else -E_PERMISSION. */
long ica_borrowed_by(const struct process *borrower, uint64_t id, struct ica **out);
/* ica_move_entry, ica_paste_lent and ica_end_lends: ica_window.h. */
struct server_entry *server_of_pid(uint32_t pid);
/* Looking a name up: kernel/server_registry.h. */
/* server_of_pid of a process, remembering its slot for the next look. */
struct server_entry *server_of_process_looked_up(struct process *process);
static inline struct server_entry *server_of_process(struct process *process)
{
    struct server_entry *seen = process->server_seen;
    if (seen != NULL && seen->pid == process->pid)
        return seen;
    return server_of_process_looked_up(process);
}
/* Whether a sender has pushed a request the server has not taken yet. */
static inline bool server_has_requests(const struct server_entry *server)
{
    return __atomic_load_n(&server->pushed, __ATOMIC_ACQUIRE) != server->taken;
}
static inline struct ring *server_ring(struct server_entry *server, uint32_t core)
{
    return (struct ring *)(server->rings + (uint64_t)core * server->ring_stride);
}
/* The lane for requests from init's account (the servers, init, the shell)
 * on `core`: a client flood fills the rings, never the servers' way in. */
static inline struct ring *server_lane(struct server_entry *server, uint32_t core)
{
    return server_ring(server, kernel_shared->core_count + core);
}
/* A sender's note of the ring it pushes into (before it adds to `pushed`). */
static inline void server_note_push(struct server_entry *server, bool lane, uint32_t core)
{
    uint32_t index = lane ? kernel_shared->core_count + core : core;
    __atomic_store_n(&server->last_pushed_ring, index, __ATOMIC_RELAXED);
}
/* Whether a sender has pushed into a lane a request the server has not taken. */
static inline bool server_has_lane_requests(const struct server_entry *server)
{
    return __atomic_load_n(&server->lane_pushed, __ATOMIC_ACQUIRE) != server->lane_taken;
}
