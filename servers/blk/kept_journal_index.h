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
/* Slot `slot` now holds a valid entry of block `block`. */
void journal_index_add(struct journal_index *index, uint32_t slot, uint64_t block);
/* Slot `slot`, which held a valid entry of block `block`, is free. */
void journal_index_remove(struct journal_index *index, uint32_t slot, uint64_t block);

static inline uint32_t journal_index_bucket(const struct journal_index *index, uint64_t block)
{
    return (uint32_t)((block * 0x9E3779B97F4A7C15ull >> 40) & index->mask);
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
