/* mapping_lend_table.h: the table of mapping lends (kernel_shared->
 * mapping_lends, docs/mmap.md): which process sees which block ICA at which
 * user address, for as long as it maps it. Open-addressed by block ICA
 * index; an entry is claimed by compare-swap by the mapper's core and
 * cleared only by it (or by the m-kernel once the mapper has ended). Plain C
 * over the table alone, so the host tests can run it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define MAPPING_LENDS 65536u              /* entries (a power of two) */
#define MAPPING_LEND_PROBES 256u          /* slots looked at from a block's home */
#define MAPPING_LEND_CLAIMING 0xffffffffu /* pid while the claimer fills the entry */
#define MAPPING_LEND_WRITABLE 1u          /* the lender granted stores */
/* Mapping lends one process holds at most (2 MiB): past it a fault ends
 * some of the process's own first, so a mapped file larger than BLK's cache
 * never pins all of it. */
#define MAPPING_LENDS_PER_PROCESS 512u
/* Lends a fault may grant its process from the room a sum of its account
 * found (account_memory.h), so the next ones need no sum. */
#define MAPPING_LEND_CREDIT 64u

struct mapping_lend {
    uint32_t pid; /* the mapper, 0: free (atomic: claimed by compare-swap) */
    uint32_t flags;
    uint64_t block;   /* the block ICA's id */
    uint64_t address; /* where the mapper sees it */
};

#define MAPPING_LEND_HOME_STRIDE 8u /* slots between neighbouring blocks' homes */

/* The first slot a block's entries are looked for in (its pool index,
 * spread so that neighbouring blocks do not share probe runs). */
static inline uint32_t mapping_lend_home(uint64_t block)
{
    return (uint32_t)((block & 0xffffffu) * MAPPING_LEND_HOME_STRIDE) & (MAPPING_LENDS - 1);
}

static inline struct mapping_lend *mapping_lend_probe(struct mapping_lend *table, uint64_t block,
                                                      uint32_t probe)
{
    return &table[(mapping_lend_home(block) + probe) & (MAPPING_LENDS - 1)];
}

/* Claims a free entry near `block`'s home for `pid`; NULL when every
 * slot of its probe run is taken. */
static inline struct mapping_lend *mapping_lend_claim(struct mapping_lend *table, uint64_t block,
                                                      uint32_t pid, uint64_t address,
                                                      uint32_t flags)
{
    for (uint32_t probe = 0; probe < MAPPING_LEND_PROBES; probe++) {
        struct mapping_lend *entry = mapping_lend_probe(table, block, probe);
        uint32_t free = 0;
        if (__atomic_load_n(&entry->pid, __ATOMIC_RELAXED) != 0 ||
            !__atomic_compare_exchange_n(&entry->pid, &free, MAPPING_LEND_CLAIMING, false,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            continue;
        entry->flags = flags;
        entry->block = block;
        entry->address = address;
        __atomic_store_n(&entry->pid, pid, __ATOMIC_RELEASE);
        return entry;
    }
    return NULL;
}

/* The entry of `pid` seeing `block` at `address`, or NULL. */
static inline struct mapping_lend *mapping_lend_find(struct mapping_lend *table, uint64_t block,
                                                     uint32_t pid, uint64_t address)
{
    for (uint32_t probe = 0; probe < MAPPING_LEND_PROBES; probe++) {
        struct mapping_lend *entry = mapping_lend_probe(table, block, probe);
        if (__atomic_load_n(&entry->pid, __ATOMIC_ACQUIRE) == pid && entry->block == block &&
            entry->address == address)
            return entry;
    }
    return NULL;
}

/* Whether `entry` is `pid`'s, at an address in [base, end). */
static inline bool mapping_lend_in_range(const struct mapping_lend *entry, uint32_t pid,
                                         uint64_t base, uint64_t end)
{
    return __atomic_load_n(&entry->pid, __ATOMIC_ACQUIRE) == pid && entry->address >= base &&
           entry->address < end;
}

/* Frees the entry (its mapper's core, or the m-kernel after the mapper ended). */
static inline void mapping_lend_clear(struct mapping_lend *entry)
{
    entry->block = entry->address = 0;
    entry->flags = 0;
    __atomic_store_n(&entry->pid, 0, __ATOMIC_RELEASE);
}

/* How many of its own lends a process holding `held` ends before it
 * installs `wanted` more, when its account may still count `room` pages
 * (UINT64_MAX: no limit): enough to stay within MAPPING_LENDS_PER_PROCESS
 * and within the room, never more than it holds. */
static inline uint32_t mapping_lends_to_end(uint32_t held, uint32_t wanted, uint64_t room)
{
    uint64_t over_bound = (uint64_t)held + wanted > MAPPING_LENDS_PER_PROCESS
                              ? (uint64_t)held + wanted - MAPPING_LENDS_PER_PROCESS
                              : 0;
    uint64_t over_room = room < wanted ? wanted - room : 0;
    uint64_t end = over_bound > over_room ? over_bound : over_room;
    return end < held ? (uint32_t)end : held;
}

/* How many of `wanted` lends fit once `ended` of its own have ended, in an
 * account that had room for `room` pages before (UINT64_MAX: no limit). */
static inline uint32_t mapping_lends_installable(uint32_t wanted, uint64_t room, uint32_t ended)
{
    uint64_t fits = room > UINT64_MAX - ended ? UINT64_MAX : room + ended;
    return fits < wanted ? (uint32_t)fits : wanted;
}
