/* kept_journal.c: BLK's journal of acknowledged writes in its kept region
 * (kept_journal.h). An entry becomes valid only after its bytes and
 * checksum are in place, and a block's older entry is freed only after the
 * newer one is valid, so a BLK that dies in the middle of a write leaves
 * either the old acknowledged bytes or the new ones, never a torn block. */
#include "kept_journal.h"
#include <formica/errors.h>
#include <string.h>

/* Where the search for a free slot starts: just past the last one taken
 * (entries are freed in bulk, so the next free slot is usually there). */
static uint32_t search_from;
/* Valid entries now (this BLK's count: a restarted BLK replays and clears). */
static uint32_t valid_count;
/* Patches are folded into whole blocks once this many entries are valid. */
#define JOURNAL_COMPACT_AT (JOURNAL_SLOTS * 3 / 4)
/* The newest patch of a block, by block number modulo this (slot + 1, 0 for
 * none): a hint, checked against the entry before it is used. */
#define PATCH_WAYS 64u
static uint32_t newest_patch[PATCH_WAYS];

/* An entry's checksum: of the `length` bytes kept in `kept` for `offset` of
 * block `number`, `length` at most a block (kept_journal.h). */
static inline __attribute__((always_inline)) uint64_t
entry_checksum(const uint8_t *kept, uint64_t number, uint32_t offset, uint32_t length)
{
    /* whole words (kept_checksum reads 8 bytes at a time): a patch's tail counts too */
    uint32_t words = (length + 7u) & ~7u;
    uint64_t place = ((uint64_t)offset << 16 | length) * 0xC2B2AE3D27D4EB4Full;
    return kept_checksum(kept, words) ^ (number * 0x9E3779B97F4A7C15ull) ^ place;
}

static int free_slot(const struct journal *journal)
{
    for (uint32_t step = 0; step < JOURNAL_SLOTS; step++) {
        uint32_t slot = (search_from + step) % JOURNAL_SLOTS;
        if (journal->entries[slot].state != JOURNAL_VALID)
            return (int)slot;
    }
    return -1;
}

static void free_older(struct journal *journal, uint64_t number, uint32_t newest)
{
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++) {
        struct journal_entry *entry = &journal->entries[slot];
        if (slot != newest && entry->state == JOURNAL_VALID && entry->block == number) {
            entry->state = JOURNAL_FREE;
            valid_count--;
        }
    }
}

void journal_clear(struct journal *journal)
{
    search_from = 0;
    valid_count = 0;
    memset(newest_patch, 0, sizeof newest_patch);
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        journal->entries[slot].state = JOURNAL_FREE;
}

/* A full journal: `cache` synced, so every entry can go; slot 0, or the
 * sync's error (apart: rare). */
static __attribute__((noinline)) int start_over(struct journal *journal, struct cache *cache)
{
    int error = cache_sync(cache);
    if (error != 0)
        return error;
    journal_clear(journal);
    return 0;
}

/* Keeps `length` bytes (at most a block) for `offset` of block `number` in a
 * fresh slot (a full journal syncs `cache` and starts over); the slot, or an
 * error. */
static inline __attribute__((always_inline)) int keep(struct journal *journal, struct cache *cache,
                                                      uint64_t number, uint32_t offset,
                                                      const uint8_t *bytes, uint32_t length)
{
    int slot = free_slot(journal);
    if (slot < 0)
        slot = start_over(journal, cache);
    if (slot < 0)
        return slot;
    struct journal_entry *entry = &journal->entries[slot];
    uint8_t *kept = journal->data[slot];
    memcpy(kept, bytes, length);
    entry->block = number;
    entry->offset = (uint16_t)offset;
    entry->length = (uint16_t)length;
    entry->sequence = ++journal->next_sequence;
    entry->checksum = entry_checksum(kept, number, offset, length);
    __atomic_store_n(&entry->state, JOURNAL_VALID, __ATOMIC_RELEASE);
    search_from = (uint32_t)slot + 1;
    valid_count++;
    return slot;
}

int journal_record(struct journal *journal, struct cache *cache, uint64_t number,
                   const uint8_t *bytes)
{
    int slot = keep(journal, cache, number, 0, bytes, STORAGE_BLOCK_BYTES);
    if (slot < 0)
        return slot;
    free_older(journal, number, (uint32_t)slot);
    return 0;
}

/* Folds the patches into whole blocks, so they do not fill the journal: a
 * patched block still dirty in the cache gets one whole entry of its bytes
 * now (they hold every patch), then its older entries are freed; a patched
 * block no longer dirty is on the disk with its patches: its entries go.
 * Each step leaves a journal that replays to the same bytes. */
static __attribute__((noinline)) int compact(struct journal *journal, struct cache *cache)
{
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++) {
        const struct journal_entry *entry = &journal->entries[slot];
        if (entry->state != JOURNAL_VALID || entry->length == STORAGE_BLOCK_BYTES)
            continue;
        uint64_t number = entry->block;
        const uint8_t *contents = cache_dirty_contents(cache, number);
        if (contents == NULL) {
            free_older(journal, number, JOURNAL_SLOTS);
            continue;
        }
        int error = journal_record(journal, cache, number, contents);
        if (error != 0)
            return error;
    }
    return 0;
}

/* The block's previous patch, if the one just kept in `newest` (`length`
 * bytes at `offset` of block `number`) covers all its bytes, is freed:
 * replayed in order it would be overwritten anyway, by the newest or by a
 * patch between them (the same place written again and again keeps one
 * entry, and the journal need not fold). Freed only after the newest is
 * valid, as free_older. */
static inline void free_covered_patch(struct journal *journal, uint32_t newest, uint64_t number,
                                      uint32_t offset, uint32_t length)
{
    uint32_t *way = &newest_patch[number % PATCH_WAYS];
    if (*way != 0 && *way - 1 != newest) {
        struct journal_entry *older = &journal->entries[*way - 1];
        if (older->state == JOURNAL_VALID && older->block == number && older->offset >= offset &&
            (uint32_t)older->offset + older->length <= offset + length) {
            older->state = JOURNAL_FREE;
            valid_count--;
        }
    }
    *way = newest + 1;
}

int journal_record_patch(struct journal *journal, struct cache *cache, uint64_t number,
                         uint32_t offset, const uint8_t *bytes, uint32_t length)
{
    if (length == 0 || !cache_range_fits(offset, length))
        return -E_INVALID;
    if (valid_count >= JOURNAL_COMPACT_AT) {
        int error = compact(journal, cache);
        if (error != 0)
            return error;
    }
    int slot = keep(journal, cache, number, offset, bytes, length);
    if (slot < 0)
        return slot;
    free_covered_patch(journal, (uint32_t)slot, number, offset, length);
    return 0;
}

/* The valid, intact entries' slots, sorted by sequence; how many. */
static uint32_t replay_order(const struct journal *journal, uint32_t *order)
{
    uint32_t count = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++) {
        const struct journal_entry *entry = &journal->entries[slot];
        if (entry->state != JOURNAL_VALID || entry->length == 0 ||
            (uint32_t)entry->offset + entry->length > STORAGE_BLOCK_BYTES ||
            entry->checksum !=
                entry_checksum(journal->data[slot], entry->block, entry->offset, entry->length))
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
        int error = entry->length == STORAGE_BLOCK_BYTES
                        ? cache_write(cache, entry->block, journal->data[order[i]])
                        : cache_patch(cache, entry->block, entry->offset, journal->data[order[i]],
                                      entry->length);
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
