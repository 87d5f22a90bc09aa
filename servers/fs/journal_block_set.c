/* journal_block_set.c: the journal's fixed-size sets of block numbers (the
 * running transaction's index, blocks logged since the last checkpoint,
 * blocks freed, replay's revoke table): open addressing, linear probing,
 * at most 3/4 full, deletion by backward shift. */
#include "journal.h"
#include <string.h>

#define EMPTY UINT32_MAX

void block_set_init(struct block_set *set, uint32_t *keys, uint32_t *values, uint32_t capacity)
{
    set->keys = keys;
    set->values = values;
    set->capacity = capacity;
    set->touched_count = BLOCK_SET_TOUCHED + 1; /* the slots' contents are unknown: sweep */
    block_set_clear(set);
}

static void touch(struct block_set *set, uint32_t slot)
{
    if (set->touched_count < BLOCK_SET_TOUCHED)
        set->touched[set->touched_count] = slot;
    if (set->touched_count <= BLOCK_SET_TOUCHED)
        set->touched_count++;
}

/* Empties the slots given keys since the last clear, or every slot when more
 * were (EMPTY is all ones: memset's string store does it). */
void block_set_clear(struct block_set *set)
{
    if (set->touched_count <= BLOCK_SET_TOUCHED) {
        for (uint32_t i = 0; i < set->touched_count; i++)
            set->keys[set->touched[i]] = EMPTY;
    } else {
        memset(set->keys, 0xff, (size_t)set->capacity * sizeof(set->keys[0]));
    }
    set->touched_count = 0;
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
        touch(set, slot);
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
        set->keys[hole] = set->keys[next]; /* the hole held a key: already touched */
        if (set->values != NULL)
            set->values[hole] = set->values[next];
        hole = next;
    }
    set->keys[hole] = EMPTY;
    set->count--;
}
