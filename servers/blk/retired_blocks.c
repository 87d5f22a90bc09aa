/* retired_blocks.c: the table of blocks FS freed, by the owner's log
 * sequence (retired_blocks.h): newest per bucket, a floor for all blocks,
 * and the seal that gives the retires sent before their sequence was known
 * the sequence they belong to. */
#include "retired_blocks.h"

static uint64_t newer(uint64_t old, uint64_t sequence)
{
    return sequence > old ? sequence : old;
}

void retired_blocks_note(struct retired_blocks *retired, uint64_t block, uint64_t sequence)
{
    uint64_t *slot = &retired->newest[retired_bucket_of(block)];
    *slot = newer(*slot, sequence);
    retired->unsealed |= sequence == UINT64_MAX;
}

void retired_blocks_note_all(struct retired_blocks *retired, uint64_t sequence)
{
    retired->floor = newer(retired->floor, sequence);
    retired->unsealed |= sequence == UINT64_MAX;
}

void retired_blocks_seal(struct retired_blocks *retired, uint64_t sequence)
{
    if (!retired->unsealed || sequence == UINT64_MAX)
        return;
    for (uint32_t i = 0; i < RETIRED_BUCKETS; i++)
        if (retired->newest[i] == UINT64_MAX)
            retired->newest[i] = sequence;
    if (retired->floor == UINT64_MAX)
        retired->floor = sequence;
    retired->unsealed = false;
}
