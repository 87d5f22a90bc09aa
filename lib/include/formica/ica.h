/* ica.h: inter-core communication areas (seed 003 §2.2), the one request
 * format of Formica, shared by the kernels, the servers and applications.
 * An ICA is a page-granular region held by one process at a time; handing it
 * over unmaps it from the sender (peel) and maps it into the receiver (paste).
 * Every ICA has a fixed address, the same in every process that holds it. */
#pragma once
#include <stdint.h>

/* ICA identifiers: generation << 32 | kind << 24 | index. A stale or forged
 * identifier (wrong generation, index out of range) is refused. */
#define ICA_KIND_CONTROL 1u
#define ICA_KIND_DATA 2u
#define ICA_KIND_BLOCK 3u /* a data ICA of exactly 4 KiB in its own dense window: cache blocks */
#define ICA_CONTROL_SLOTS 4096u
#define ICA_DATA_SLOTS 1024u
#define ICA_DATA_MAX_BYTES (1u << 20)          /* a data ICA holds 4 KiB .. 1 MiB */
#define ICA_CONTROL_BASE 0x0000500000000000ull /* + index * 4 KiB */
#define ICA_DATA_BASE 0x0000510000000000ull    /* + index * 1 MiB */
#define ICA_BLOCK_SLOTS 8192u
#define ICA_BLOCK_BASE 0x0000520000000000ull /* + index * 4 KiB */
#define ICA_BLOCKS_PER_PROCESS 4096u         /* block ICAs one process may have allocated at once */
#define ICA_PER_PROCESS 64u                  /* ICAs one process may have allocated at once */

#define ICA_MAX_RETURNS 8             /* depth of a multi-stage request */
#define ICA_MAX_ATTACHED 4            /* data ICAs travelling with one control ICA */
#define ICA_CONTROL_MAGIC 0x21414349u /* "ICA!" */
#define ICA_MESSAGE_BYTES 64          /* room for an operation's typed message */

/* Flags of SYS_ICA_REQUEST / SYS_ICA_FORWARD / SYS_ICA_RECEIVE / SYS_ICA_COLLECT. */
#define ICA_SYNC 1u          /* request: wait for this control ICA's result */
#define ICA_RETURN_VIA_ME 2u /* forward: the result comes back through me (no direct return) */
#define ICA_NO_WAIT 4u       /* receive/collect: -E_NOT_FOUND instead of waiting */
#define ICA_OR_RESULT 8u     /* receive: also take a result (see arrival) */
#define ICA_TIMEOUT 16u /* receive: -E_NOT_FOUND after the milliseconds given (timed_receive) */
#define ICA_OR_IRQ 32u  /* receive: -E_INTERRUPTED when the caller's device interrupt is first */
/* forward: the request keeps the stamp of the one who sent it to the
 * forwarder (rights, uid, gid, quota account): allowed only from one
 * instance of a server name to another of the same name (else
 * -E_PERMISSION), which act as one server (an FS replica's forward of a
 * change to the owner, docs/design.md "Server instances"). */
#define ICA_KEEP_SENDER 64u

/* Flag of SYS_ICA_LEND_COUNT: count only the lends that are not mapping
 * lends (a block only mappings see can be reused once they are revoked). */
#define ICA_LENDS_BUT_MAPPINGS 1u

#define ICA_ARRIVED_AS_REQUEST 1u
#define ICA_ARRIVED_AS_RESULT 2u

/* The control ICA: one page. The requester fills operation, arguments and the
 * list of data ICAs it attaches; the kernel fills the routing fields when the
 * ICA arrives; the server writes result (and may attach data ICAs) before
 * returning it. payload carries small inline data (paths, names). */
struct ica_control {
    uint32_t magic;     /* ICA_CONTROL_MAGIC, checked at every handover */
    uint32_t operation; /* server-specific request code */
    int64_t result;     /* set by the server: >= 0 value, < 0 -E_* code */
    uint64_t tag;       /* the requester's own cookie, untouched by the kernel */
    /* The operation's typed message (struct <server>_<operation>_message,
     * generated from protocol/<server>.messages): inputs and outputs. */
    uint8_t message[ICA_MESSAGE_BYTES] __attribute__((aligned(8)));
    /* Written by the kernel on arrival. */
    uint32_t arrival;                  /* ICA_ARRIVED_AS_REQUEST or ICA_ARRIVED_AS_RESULT */
    uint32_t origin;                   /* pid of the process that made the request */
    uint32_t sender;                   /* pid the ICA came from this time */
    uint32_t sender_rights;            /* its RIGHT_* set (RIGHT_KERNEL: the kernel sent it) */
    uint32_t sender_uid;               /* its user id: whose files it may touch */
    uint32_t sender_gid;               /* its group id */
    uint32_t sender_account;           /* its quota account (the pid that founded it) */
    uint32_t reserved_routing;         /* 0 */
    uint32_t return_depth;             /* how many returns are still to happen */
    uint32_t returns[ICA_MAX_RETURNS]; /* pids the result goes back to, last first */
    /* Written by whoever hands the ICA over: data ICAs travelling with it. */
    uint32_t data_count;
    uint64_t data[ICA_MAX_ATTACHED];
    /* Written by the kernel on arrival: each data ICA's size in pages, 0 for
     * one that did not arrive mapped (data_ica_holds reads it). */
    uint32_t data_pages[ICA_MAX_ATTACHED];
    /* Data ICAs the sender keeps but lends, read-only, to the receiver for as
     * long as the receiver holds this control ICA (a cached block shown to
     * the requester without a copy). The lend ends at the next handover; on
     * arrival the list shows what was lent to the receiver, and passing the
     * ICA on with that list unchanged gives those back rather than lending. */
    uint32_t lent_count;
    uint64_t lent[ICA_MAX_ATTACHED];
    uint8_t payload[];
};

#define ICA_PAYLOAD_BYTES (4096u - (uint32_t)sizeof(struct ica_control))
_Static_assert(sizeof(struct ica_control) <= 4096u / 8, "the payload keeps most of the page");

/* The three ICA windows follow each other without overlapping. */
_Static_assert(ICA_CONTROL_BASE + ICA_CONTROL_SLOTS * 4096ull <= ICA_DATA_BASE, "windows overlap");
_Static_assert(ICA_DATA_BASE + ICA_DATA_SLOTS * (uint64_t)ICA_DATA_MAX_BYTES <= ICA_BLOCK_BASE,
               "windows overlap");

/* Counts for tests and benchmarks (SYS_ICA_STATS); the shell's `stats`
 * prints them, and a leak check compares them before and after a run. */
struct ica_stats {
    uint32_t control_free, data_free; /* slots in the pools */
    uint32_t allocated_by_me;
    uint32_t block_free;     /* slots in the block pool */
    uint64_t handovers;      /* peel+paste pairs since boot, all cores */
    uint64_t ipis;           /* IPIs sent since boot, all cores */
    uint64_t frames_used;    /* physical frames allocated now (of frames_total) */
    uint64_t frames_total;   /* frames free when the allocator started */
    uint32_t processes_used; /* process slots taken (zombies too) */
    uint32_t process_slots;  /* slots in the process table */
    /* Of frames_used: page tables (a server keeps the tables of every ICA
     * window it has seen) and server request rings (kept for good per
     * server slot). Bounded, so a leak check compares the other frames. */
    uint64_t table_frames;
    uint64_t ring_frames;
};

static inline uint32_t ica_index(uint64_t id)
{
    return (uint32_t)(id & 0xffffff);
}

static inline uint32_t ica_kind(uint64_t id)
{
    return (uint32_t)((id >> 24) & 0xff);
}

/* Where the ICA is mapped while a process holds it. */
static inline void *ica_address(uint64_t id)
{
    if (ica_kind(id) == ICA_KIND_BLOCK) /* first: a lent cached block, a readblock's answer */
        return (void *)(ICA_BLOCK_BASE + (uint64_t)ica_index(id) * 4096);
    if (ica_kind(id) == ICA_KIND_CONTROL)
        return (void *)(ICA_CONTROL_BASE + (uint64_t)ica_index(id) * 4096);
    return (void *)(ICA_DATA_BASE + (uint64_t)ica_index(id) * ICA_DATA_MAX_BYTES);
}
