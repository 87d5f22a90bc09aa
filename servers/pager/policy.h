/* policy.h: the pager's block replacement policies (seed 004 §3.3.2), pure
 * and host-testable: pseudo-LRU with active and inactive lists driven by the
 * MMU accessed bits (Fig. 3), FIFO, the drop hint, and the in-flight bound. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define POLICY_NONE 0xffffffffu

enum policy_list {
    POLICY_LIST_NONE = 0,
    POLICY_LIST_ACTIVE,
    POLICY_LIST_INACTIVE,
    POLICY_LIST_DROP,
    POLICY_LISTS
};

/* One per block of a region, owned by the caller (block_count of them). */
struct policy_link {
    uint32_t previous, next;
    uint8_t list; /* enum policy_list */
};

struct policy_queue {
    uint32_t head, tail, count;
};

struct policy_state {
    uint32_t kind; /* PAGER_POLICY_LRU or PAGER_POLICY_FIFO (formica/pager.h) */
    uint32_t block_count;
    struct policy_link *links;
    struct policy_queue queues[POLICY_LISTS];
};

/* Asks the MMU whether any page of `block` was referenced since the last
 * call, and clears the bits (block.referenced() of Fig. 3). */
typedef bool (*policy_referenced_fn)(void *context, uint32_t block);

void policy_init(struct policy_state *state, uint32_t kind, uint32_t block_count,
                 struct policy_link *links);
/* A block became resident (new or swapped in): the tail of the active list. */
void policy_add(struct policy_state *state, uint32_t block);
/* A block left local memory by other means (released): off every list. */
void policy_remove(struct policy_state *state, uint32_t block);
/* teramem_drop: a resident block goes to the drop list, evicted first. */
void policy_hint_drop(struct policy_state *state, uint32_t block);
bool policy_is_resident(const struct policy_state *state, uint32_t block);
uint32_t policy_resident_count(const struct policy_state *state);
/* Picks and removes the next victim; POLICY_NONE when nothing is resident. */
uint32_t policy_choose_victim(struct policy_state *state, policy_referenced_fn referenced,
                              void *context);

/* Asynchronous swap-out bound (seed 004 §4.1): bytes being stored. */
struct inflight_bound {
    uint64_t limit, bytes, peak;
};
void inflight_init(struct inflight_bound *bound, uint64_t limit);
/* True when starting a store of `bytes` must first wait for completions:
 * something is in flight and the total would pass the limit. */
bool inflight_must_wait(const struct inflight_bound *bound, uint64_t bytes);
void inflight_start(struct inflight_bound *bound, uint64_t bytes);
void inflight_finish(struct inflight_bound *bound, uint64_t bytes);

/* The blocks [*first, *last] of a region that [address, address + bytes)
 * touches, clipped to the region; false when none. */
bool policy_block_range(uint64_t region_base, uint64_t region_bytes, uint32_t block_bytes,
                        uint64_t address, uint64_t bytes, uint32_t *first, uint32_t *last);
