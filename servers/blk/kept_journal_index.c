/* kept_journal_index.c: the kept journal's valid entries by block number
 * (kept_journal_index.h): lists per bucket, linked both ways so that a slot
 * leaves its list the moment its entry is freed; its reset (the list steps
 * are inline in the header). */
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
