/* kept_journal_index.c: the kept journal's valid entries by block number
 * (kept_journal_index.h): lists per bucket, linked both ways so that a slot
 * leaves its list the moment its entry is freed. */
#include "kept_journal_index.h"

void journal_index_reset(struct journal_index *index, uint32_t slots)
{
    uint32_t buckets = 1;
    while (buckets < 2 * slots && buckets < JOURNAL_INDEX_BUCKETS)
        buckets *= 2;
    index->mask = buckets - 1;
    for (uint32_t bucket = 0; bucket < buckets; bucket++)
        index->head[bucket] = JOURNAL_INDEX_NONE;
}

void journal_index_add(struct journal_index *index, uint32_t slot, uint64_t block)
{
    uint16_t *head = &index->head[journal_index_bucket(index, block)];
    index->next[slot] = *head;
    index->previous[slot] = JOURNAL_INDEX_NONE;
    if (*head != JOURNAL_INDEX_NONE)
        index->previous[*head] = (uint16_t)slot;
    *head = (uint16_t)slot;
}

void journal_index_remove(struct journal_index *index, uint32_t slot, uint64_t block)
{
    uint16_t next = index->next[slot], previous = index->previous[slot];
    if (previous != JOURNAL_INDEX_NONE)
        index->next[previous] = next;
    else
        index->head[journal_index_bucket(index, block)] = next;
    if (next != JOURNAL_INDEX_NONE)
        index->previous[next] = previous;
}
