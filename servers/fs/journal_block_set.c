/* journal_block_set.c: the journal's fixed-size sets of block numbers (the
 * running transaction's index, blocks logged since the last checkpoint,
 * blocks freed, replay's revoke table): open addressing, linear probing,
 * at most 3/4 full, deletion by backward shift. */
#include "journal.h"

#define EMPTY UINT32_MAX

void block_set_init(struct block_set *set, uint32_t *keys, uint32_t *values, uint32_t capacity)
{
    set->keys = keys;
    set->values = values;
    set->capacity = capacity;
    block_set_clear(set);
}

void block_set_clear(struct block_set *set)
{
    for (uint32_t i = 0; i < set->capacity; i++)
        set->keys[i] = EMPTY;
    set->count = 0;
}

bool block_set_put(struct block_set *set, uint32_t block, uint32_t value)
{
    uint32_t slot = block_set_find(set, block);
    if (slot == EMPTY) {
        if ((set->count + 1) * 4 > set->capacity * 3)
            return false;
        slot = block_set_home(set, block);
        while (set->keys[slot] != EMPTY)
            slot = (slot + 1) & (set->capacity - 1);
        set->keys[slot] = block;
        set->count++;
    }
    if (set->values != NULL)
        set->values[slot] = value;
    return true;
}

/* Backward-shift deletion keeps every probe chain unbroken. */
void block_set_remove(struct block_set *set, uint32_t block)
{
    uint32_t hole = block_set_find(set, block);
    if (hole == EMPTY)
        return;
    uint32_t mask = set->capacity - 1;
    for (uint32_t next = (hole + 1) & mask; set->keys[next] != EMPTY; next = (next + 1) & mask) {
        uint32_t home = block_set_home(set, set->keys[next]);
        /* move `next` into the hole unless its home lies in (hole, next] */
        bool stays = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next);
        if (stays)
            continue;
        set->keys[hole] = set->keys[next];
        if (set->values != NULL)
            set->values[hole] = set->values[next];
        hole = next;
    }
    set->keys[hole] = EMPTY;
    set->count--;
}
