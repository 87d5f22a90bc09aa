/* kept_journal.c: BLK's journal of acknowledged writes in its kept region
 * (kept_journal.h). An entry becomes valid only after its bytes and
 * checksum are in place, and a block's older entry is freed only after the
 * newer one is valid, so a BLK that dies in the middle of a write leaves
 * either the old acknowledged bytes or the new ones, never a torn block. */
#include "kept_journal.h"
#include <formica/errors.h>
#include <string.h>

/* Frees block `number`'s valid entries but `newest` (found through the
 * index: only the slots of the block's bucket are looked at). */
static void free_older(struct journal_writer *writer, uint64_t number, uint32_t newest)
{
    uint32_t slot = journal_index_first(&writer->index, number);
    while (slot != JOURNAL_INDEX_NONE) {
        uint32_t next = journal_index_next(&writer->index, slot);
        struct journal_entry *entry = &writer->journal->entries[slot];
        if (slot != newest && entry->block == number) {
            entry->state = JOURNAL_FREE;
            journal_index_remove(&writer->index, slot, number);
            writer->valid_count--;
        }
        slot = next;
    }
}

static void free_all(struct journal *journal)
{
    for (uint32_t slot = 0; slot < journal->slots; slot++)
        journal->entries[slot].state = JOURNAL_FREE;
}

int journal_free_slot_search(const struct journal_writer *writer)
{
    uint32_t slots = writer->journal->slots;
    for (uint32_t step = 0; step < slots; step++) {
        uint32_t slot = (writer->search_from + step) % slots;
        if (writer->journal->entries[slot].state != JOURNAL_VALID)
            return (int)slot;
    }
    return -1;
}

void journal_start(struct journal_writer *writer, struct journal *journal)
{
    writer->journal = journal;
    writer->search_from = 0;
    writer->valid_count = 0;
    memset(writer->newest_patch, 0, sizeof(writer->newest_patch));
    journal_index_reset(&writer->index, journal->slots);
}

void journal_clear(struct journal_writer *writer)
{
    free_all(writer->journal);
    journal_start(writer, writer->journal);
}

int journal_start_over(struct journal_writer *writer, struct cache *cache)
{
    int error = cache_sync(cache);
    if (error != 0)
        return error;
    journal_clear(writer);
    return 0;
}

int journal_record(struct journal_writer *writer, struct cache *cache, uint64_t number,
                   const uint8_t *bytes)
{
    int slot = journal_keep(writer, cache, number, 0, bytes, STORAGE_BLOCK_BYTES);
    if (slot < 0)
        return slot;
    journal_index_add(&writer->index, (uint32_t)slot, number);
    free_older(writer, number, (uint32_t)slot);
    return 0;
}

/* Folds the patches into whole blocks, so they do not fill the journal: a
 * patched block still dirty in the cache gets one whole entry of its bytes
 * now (they hold every patch), then its older entries are freed; a patched
 * block no longer dirty is on the disk with its patches: its entries go.
 * Each step leaves a journal that replays to the same bytes. */
int journal_compact(struct journal_writer *writer, struct cache *cache)
{
    for (uint32_t slot = 0; slot < writer->journal->slots; slot++) {
        const struct journal_entry *entry = &writer->journal->entries[slot];
        if (entry->state != JOURNAL_VALID || entry->length == STORAGE_BLOCK_BYTES)
            continue;
        uint64_t number = entry->block;
        const uint8_t *contents = cache_dirty_contents(cache, number);
        if (contents == NULL) {
            free_older(writer, number, writer->journal->slots);
            continue;
        }
        int error = journal_record(writer, cache, number, contents);
        if (error != 0)
            return error;
    }
    return 0;
}

/* The valid, intact entries' slots, sorted by sequence; how many. */
static uint32_t replay_order(struct journal *journal, uint32_t *order)
{
    uint32_t count = 0;
    for (uint32_t slot = 0; slot < journal->slots; slot++) {
        const struct journal_entry *entry = &journal->entries[slot];
        if (entry->state != JOURNAL_VALID || entry->length == 0 ||
            (uint32_t)entry->offset + entry->length > STORAGE_BLOCK_BYTES ||
            entry->checksum != journal_checksum(journal_data(journal, slot), entry->block,
                                                entry->offset, entry->length))
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
    static uint32_t order[JOURNAL_SLOTS_ALL];
    if (journal->slots > JOURNAL_SLOTS_ALL)
        return -E_CORRUPT;
    uint32_t count = replay_order(journal, order);
    for (uint32_t i = 0; i < count; i++) {
        const struct journal_entry *entry = &journal->entries[order[i]];
        int error = entry->length == STORAGE_BLOCK_BYTES
                        ? cache_write(cache, entry->block, journal_data(journal, order[i]))
                        : cache_patch(cache, entry->block, entry->offset,
                                      journal_data(journal, order[i]), entry->length);
        if (error != 0)
            return error;
        if (entry->sequence > journal->next_sequence)
            journal->next_sequence = entry->sequence;
    }
    int error = cache_sync(cache);
    if (error != 0)
        return error;
    free_all(journal);
    return count;
}
