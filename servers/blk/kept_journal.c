/* kept_journal.c: BLK's journal of acknowledged writes in its kept region
 * (kept_journal.h). An entry becomes valid only after its bytes and
 * checksum are in place, and a block's older entry is freed only after the
 * newer one is valid, so a BLK that dies in the middle of a write leaves
 * either the old acknowledged bytes or the new ones, never a torn block. */
#include "kept_journal.h"
#include <formica/errors.h>
#include <string.h>

static uint64_t entry_checksum(const struct journal *journal, uint32_t slot)
{
    return kept_checksum(journal->data[slot], STORAGE_BLOCK_BYTES) ^
           (journal->entries[slot].block * 0x9E3779B97F4A7C15ull);
}

static int free_slot(const struct journal *journal)
{
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        if (journal->entries[slot].state != JOURNAL_VALID)
            return (int)slot;
    return -1;
}

static void free_older(struct journal *journal, uint64_t number, uint32_t newest)
{
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++) {
        struct journal_entry *entry = &journal->entries[slot];
        if (slot != newest && entry->state == JOURNAL_VALID && entry->block == number)
            entry->state = JOURNAL_FREE;
    }
}

void journal_clear(struct journal *journal)
{
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        journal->entries[slot].state = JOURNAL_FREE;
}

int journal_record(struct journal *journal, struct cache *cache, uint64_t number,
                   const uint8_t *bytes)
{
    int slot = free_slot(journal);
    if (slot < 0) {
        int error = cache_sync(cache);
        if (error != 0)
            return error;
        journal_clear(journal);
        slot = 0;
    }
    struct journal_entry *entry = &journal->entries[slot];
    memcpy(journal->data[slot], bytes, STORAGE_BLOCK_BYTES);
    entry->block = number;
    entry->sequence = ++journal->next_sequence;
    entry->checksum = entry_checksum(journal, (uint32_t)slot);
    __atomic_store_n(&entry->state, JOURNAL_VALID, __ATOMIC_RELEASE);
    free_older(journal, number, (uint32_t)slot);
    return 0;
}

/* The valid, intact entries' slots, sorted by sequence; how many. */
static uint32_t replay_order(const struct journal *journal, uint32_t *order)
{
    uint32_t count = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++) {
        const struct journal_entry *entry = &journal->entries[slot];
        if (entry->state != JOURNAL_VALID || entry->checksum != entry_checksum(journal, slot))
            continue;
        uint32_t at = count++;
        while (at > 0 && journal->entries[order[at - 1]].sequence > entry->sequence) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = slot;
    }
    return count;
}

long journal_replay(struct journal *journal, struct cache *cache)
{
    uint32_t order[JOURNAL_SLOTS];
    uint32_t count = replay_order(journal, order);
    for (uint32_t i = 0; i < count; i++) {
        const struct journal_entry *entry = &journal->entries[order[i]];
        int error = cache_write(cache, entry->block, journal->data[order[i]]);
        if (error != 0)
            return error;
        if (entry->sequence > journal->next_sequence)
            journal->next_sequence = entry->sequence;
    }
    int error = cache_sync(cache);
    if (error != 0)
        return error;
    journal_clear(journal);
    return count;
}
