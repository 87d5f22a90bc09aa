/* kept_journal_index.h: BLK's index of its kept journal's valid entries by
 * block number, so that a new entry frees the block's older ones without a
 * scan of every slot. Private to the writer (not kept): rebuilt empty when
 * the journal starts over, and a restarted BLK replays without it. */
#pragma once
#include <stdint.h>

#define JOURNAL_INDEX_SLOTS 2048u /* JOURNAL_SLOTS_ALL: a shard never has more */
#define JOURNAL_INDEX_BUCKETS (2u * JOURNAL_INDEX_SLOTS)
#define JOURNAL_INDEX_NONE 0xffffu

/* Per bucket (block number hashed), a doubly-linked list of the slots whose
 * valid entry is of a block of that bucket. */
struct journal_index {
    uint32_t mask; /* buckets in use - 1: a power of two, at least twice the slots */
    uint16_t head[JOURNAL_INDEX_BUCKETS];
    uint16_t next[JOURNAL_INDEX_SLOTS];
    uint16_t previous[JOURNAL_INDEX_SLOTS];
};

/* Empties the index for a journal of `slots` slots (at most JOURNAL_INDEX_SLOTS). */
void journal_index_reset(struct journal_index *index, uint32_t slots);

static inline uint32_t journal_index_bucket(const struct journal_index *index, uint64_t block)
{
    return (uint32_t)((block * 0x9E3779B97F4A7C15ull >> 40) & index->mask);
}

/* Slot `slot` now holds a valid entry of block `block`. Inline, as the two
 * below: each is a few loads and stores, and BLK makes one per write. */
static inline void journal_index_add(struct journal_index *index, uint32_t slot, uint64_t block)
{
    uint16_t *head = &index->head[journal_index_bucket(index, block)];
    index->next[slot] = *head;
    index->previous[slot] = JOURNAL_INDEX_NONE;
    if (*head != JOURNAL_INDEX_NONE)
        index->previous[*head] = (uint16_t)slot;
    *head = (uint16_t)slot;
}

/* Slot `slot`, which held a valid entry of block `block`, is free. */
static inline void journal_index_remove(struct journal_index *index, uint32_t slot, uint64_t block)
{
    uint16_t next = index->next[slot], previous = index->previous[slot];
    if (previous != JOURNAL_INDEX_NONE)
        index->next[previous] = next;
    else
        index->head[journal_index_bucket(index, block)] = next;
    if (next != JOURNAL_INDEX_NONE)
        index->previous[next] = previous;
}

/* Slot `older`, which held a valid entry of block `block`, is free, and
 * slot `newer` (not in the index) now holds one of the same block: `newer`
 * takes `older`'s place in its bucket's list (a patch that frees the older
 * patch it covers: one step instead of an add and a remove). */
static inline void journal_index_replace(struct journal_index *index, uint32_t older,
                                         uint32_t newer, uint64_t block)
{
    uint16_t next = index->next[older], previous = index->previous[older];
    index->next[newer] = next;
    index->previous[newer] = previous;
    if (previous != JOURNAL_INDEX_NONE)
        index->next[previous] = (uint16_t)newer;
    else
        index->head[journal_index_bucket(index, block)] = (uint16_t)newer;
    if (next != JOURNAL_INDEX_NONE)
        index->previous[next] = (uint16_t)newer;
}

/* The first slot of `block`'s bucket (JOURNAL_INDEX_NONE for none); the
 * walker checks each slot's block, as several blocks share a bucket. */
static inline uint32_t journal_index_first(const struct journal_index *index, uint64_t block)
{
    return index->head[journal_index_bucket(index, block)];
}

static inline uint32_t journal_index_next(const struct journal_index *index, uint32_t slot)
{
    return index->next[slot];
}
