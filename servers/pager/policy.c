/* policy.c: pseudo-LRU exactly as seed 004 Fig. 3 (active and inactive
 * lists, moved only when a swap-out is needed), FIFO, drop hints, and the
 * in-flight bound. No system calls: the caller passes referenced(). */
#include "policy.h"
#include <formica/pager.h>

static void queue_append(struct policy_state *state, uint8_t list, uint32_t block)
{
    struct policy_queue *queue = &state->queues[list];
    struct policy_link *link = &state->links[block];
    link->list = list;
    link->next = POLICY_NONE;
    link->previous = queue->tail;
    if (queue->tail == POLICY_NONE)
        queue->head = block;
    else
        state->links[queue->tail].next = block;
    queue->tail = block;
    queue->count++;
}

static void queue_unlink(struct policy_state *state, uint32_t block)
{
    struct policy_link *link = &state->links[block];
    if (link->list == POLICY_LIST_NONE)
        return;
    struct policy_queue *queue = &state->queues[link->list];
    if (link->previous == POLICY_NONE)
        queue->head = link->next;
    else
        state->links[link->previous].next = link->next;
    if (link->next == POLICY_NONE)
        queue->tail = link->previous;
    else
        state->links[link->next].previous = link->previous;
    queue->count--;
    link->list = POLICY_LIST_NONE;
    link->previous = link->next = POLICY_NONE;
}

static void queue_move(struct policy_state *state, uint32_t block, uint8_t list)
{
    queue_unlink(state, block);
    queue_append(state, list, block);
}

void policy_init(struct policy_state *state, uint32_t kind, uint32_t block_count,
                 struct policy_link *links)
{
    state->kind = kind;
    state->block_count = block_count;
    state->links = links;
    for (int list = 0; list < POLICY_LISTS; list++)
        state->queues[list] = (struct policy_queue){POLICY_NONE, POLICY_NONE, 0};
    for (uint32_t block = 0; block < block_count; block++)
        links[block] = (struct policy_link){POLICY_NONE, POLICY_NONE, POLICY_LIST_NONE};
}

void policy_add(struct policy_state *state, uint32_t block)
{
    if (block < state->block_count)
        queue_move(state, block, POLICY_LIST_ACTIVE);
}

void policy_remove(struct policy_state *state, uint32_t block)
{
    if (block < state->block_count)
        queue_unlink(state, block);
}

void policy_hint_drop(struct policy_state *state, uint32_t block)
{
    if (policy_is_resident(state, block))
        queue_move(state, block, POLICY_LIST_DROP);
}

bool policy_is_resident(const struct policy_state *state, uint32_t block)
{
    return block < state->block_count && state->links[block].list != POLICY_LIST_NONE;
}

uint32_t policy_resident_count(const struct policy_state *state)
{
    return state->queues[POLICY_LIST_ACTIVE].count + state->queues[POLICY_LIST_INACTIVE].count +
           state->queues[POLICY_LIST_DROP].count;
}

static uint32_t take_head(struct policy_state *state, uint8_t list)
{
    uint32_t block = state->queues[list].head;
    if (block != POLICY_NONE)
        queue_unlink(state, block);
    return block;
}

/* Fig. 3, first loop: when the inactive list is empty, every active block
 * not referenced since the last look goes to the inactive list. */
static void lru_refill_inactive(struct policy_state *state, policy_referenced_fn referenced,
                                void *context)
{
    if (state->queues[POLICY_LIST_INACTIVE].count != 0)
        return;
    uint32_t block = state->queues[POLICY_LIST_ACTIVE].head;
    while (block != POLICY_NONE) {
        uint32_t next = state->links[block].next;
        if (!referenced(context, block))
            queue_move(state, block, POLICY_LIST_INACTIVE);
        block = next;
    }
}

/* Fig. 3, second loop: referenced inactive blocks go back to the active
 * tail; the first unreferenced one is the victim. */
static uint32_t lru_scan_inactive(struct policy_state *state, policy_referenced_fn referenced,
                                  void *context)
{
    uint32_t block = state->queues[POLICY_LIST_INACTIVE].head;
    while (block != POLICY_NONE) {
        uint32_t next = state->links[block].next;
        if (!referenced(context, block)) {
            queue_unlink(state, block);
            return block;
        }
        queue_move(state, block, POLICY_LIST_ACTIVE);
        block = next;
    }
    return POLICY_NONE;
}

static uint32_t lru_choose_victim(struct policy_state *state, policy_referenced_fn referenced,
                                  void *context)
{
    lru_refill_inactive(state, referenced, context);
    uint32_t victim = lru_scan_inactive(state, referenced, context);
    return victim != POLICY_NONE ? victim : take_head(state, POLICY_LIST_ACTIVE);
}

uint32_t policy_choose_victim(struct policy_state *state, policy_referenced_fn referenced,
                              void *context)
{
    uint32_t victim = take_head(state, POLICY_LIST_DROP);
    if (victim != POLICY_NONE)
        return victim;
    if (state->kind == PAGER_POLICY_LRU)
        return lru_choose_victim(state, referenced, context);
    return take_head(state, POLICY_LIST_ACTIVE);
}

void inflight_init(struct inflight_bound *bound, uint64_t limit)
{
    *bound = (struct inflight_bound){.limit = limit};
}

bool inflight_must_wait(const struct inflight_bound *bound, uint64_t bytes)
{
    return bound->bytes != 0 && bound->bytes + bytes > bound->limit;
}

void inflight_start(struct inflight_bound *bound, uint64_t bytes)
{
    bound->bytes += bytes;
    if (bound->bytes > bound->peak)
        bound->peak = bound->bytes;
}

void inflight_finish(struct inflight_bound *bound, uint64_t bytes)
{
    bound->bytes = bytes > bound->bytes ? 0 : bound->bytes - bytes;
}

bool policy_block_range(uint64_t region_base, uint64_t region_bytes, uint32_t block_bytes,
                        uint64_t address, uint64_t bytes, uint32_t *first, uint32_t *last)
{
    if (bytes == 0 || block_bytes == 0)
        return false;
    uint64_t start = address < region_base ? region_base : address;
    uint64_t region_end = region_base + region_bytes;
    uint64_t end = address + bytes < address ? region_end : address + bytes;
    if (end > region_end)
        end = region_end;
    if (start >= end)
        return false;
    *first = (uint32_t)((start - region_base) / block_bytes);
    *last = (uint32_t)((end - 1 - region_base) / block_bytes);
    return true;
}
