/* kept_journal.h: BLK's journal of acknowledged writes, in its kept region
 * (formica/kept_region.h): every block BLK_WRITE puts dirty into the cache
 * is also copied here before the answer, and every BLK_PATCH keeps just its
 * bytes, so a BLK that ends loses nothing it acknowledged: the restarted BLK
 * replays the journal into its cache in order and writes it to the disk.
 * Cleared by every successful sync. */
#pragma once
#include "cache.h"
#include "kept_journal_index.h"
#include <formica/kept_region.h>
#include <formica/storage.h>
#include <stdint.h>
#include <string.h>

/* Slots (a block each) of a shard's journal: 8 MiB of blocks for all
 * shards together, at least 1 MiB each (journal_slots_for). When full, the
 * cache is synced: the journal bounds what BLK holds dirty, as Linux's
 * dirty limits do, so a run that updates more distinct blocks than it holds
 * waits for the disk. */
#define JOURNAL_SLOTS_ALL 2048u
#define JOURNAL_SLOTS_LEAST 256u
#define JOURNAL_MAGIC 0x314c4e524a4b4c42ull /* "BLKJRNL1" */
#define JOURNAL_VERSION 3u
#define JOURNAL_FREE 0u
#define JOURNAL_VALID 1u

struct journal_entry {
    uint64_t block;    /* disk block number */
    uint64_t sequence; /* replayed in this order; a whole block frees its older entries */
    uint64_t checksum; /* kept_checksum of the bytes kept, the number, offset and length */
    uint32_t state;    /* JOURNAL_FREE or JOURNAL_VALID, written last */
    uint16_t offset;   /* where the kept bytes go in the block (0 for a whole block) */
    uint16_t length;   /* bytes kept: STORAGE_BLOCK_BYTES, or a patch's few */
};
_Static_assert(STORAGE_BLOCK_BYTES <= UINT16_MAX, "offsets and lengths fit in 16 bits");

/* The kept region: this header, `slots` entries, then (from the next page)
 * `slots` blocks of kept bytes (journal_data). */
struct journal {
    struct kept_header header;
    uint64_t next_sequence;
    uint32_t slots;
    uint32_t reserved;
    struct journal_entry entries[];
};

/* A shard's slots when BLK runs as `shards` shards. */
static inline uint32_t journal_slots_for(uint32_t shards)
{
    uint32_t slots = JOURNAL_SLOTS_ALL / (shards > 0 ? shards : 1);
    return slots > JOURNAL_SLOTS_LEAST ? slots : JOURNAL_SLOTS_LEAST;
}

static inline size_t journal_data_offset(uint32_t slots)
{
    size_t entries = sizeof(struct journal) + (size_t)slots * sizeof(struct journal_entry);
    return (entries + STORAGE_BLOCK_BYTES - 1) / STORAGE_BLOCK_BYTES * STORAGE_BLOCK_BYTES;
}

/* The kept region's size for `slots` slots. */
static inline size_t journal_bytes(uint32_t slots)
{
    return journal_data_offset(slots) + (size_t)slots * STORAGE_BLOCK_BYTES;
}

/* The kept bytes of slot `slot`. */
static inline uint8_t *journal_data(struct journal *journal, uint32_t slot)
{
    return (uint8_t *)journal + journal_data_offset(journal->slots) +
           (size_t)slot * STORAGE_BLOCK_BYTES;
}

#define JOURNAL_PATCH_WAYS 64u /* newest_patch's size */
/* What this BLK knows of its journal besides the kept region itself (not
 * kept: a restarted BLK replays the journal and starts it over). */
struct journal_writer {
    struct journal *journal;
    /* Where the search for a free slot starts: just past the last one taken
     * (entries are freed in bulk, so the next free slot is usually there). */
    uint32_t search_from;
    uint32_t valid_count; /* valid entries now */
    /* The newest patch of a block, by block number modulo the ways (slot + 1,
     * 0 for none): a hint, checked against the entry before it is used. */
    uint32_t newest_patch[JOURNAL_PATCH_WAYS];
    struct journal_index index; /* the valid entries by block */
};
_Static_assert(JOURNAL_SLOTS_ALL <= JOURNAL_INDEX_SLOTS, "the index holds every slot");
/* Patches are folded into whole blocks once this many entries are valid. */
static inline uint32_t journal_compact_at(const struct journal *journal)
{
    return journal->slots * 3 / 4;
}

/* Starts writing `journal`, which holds no valid entry (a new region's, or
 * one just replayed) and knows its slots. */
void journal_start(struct journal_writer *writer, struct journal *journal);
/* Copies block `number`'s new bytes into the journal (a fresh slot; the
 * block's older entry is freed after). A full journal syncs `cache` first
 * and is cleared. 0 or an error of the sync. */
int journal_record(struct journal_writer *writer, struct cache *cache, uint64_t number,
                   const uint8_t *bytes);
/* Forgets every entry (their blocks are on the disk). */
void journal_clear(struct journal_writer *writer);
/* After a restart: writes every valid entry (bad checksums are skipped) into
 * `cache` in sequence order, syncs it and clears the journal. Returns how
 * many blocks it replayed, or an error (the journal is then kept). */
long journal_replay(struct journal *journal, struct cache *cache);
/* journal_record_patch's rare steps (kept_journal.c): a full journal's sync
 * and start over (slot 0, or the sync's error), and the patches' folding
 * into whole blocks (0 or an error). */
int journal_start_over(struct journal_writer *writer, struct cache *cache);
int journal_compact(struct journal_writer *writer, struct cache *cache);

/* Keeping one entry: a patch (BLK's small write, one per update) or a
 * whole block. */

/* An entry's checksum, from `sum`, kept_checksum of the whole words that
 * hold the `length` bytes kept for `offset` of block `number`. */
static inline uint64_t journal_checksum_from(uint64_t sum, uint64_t number, uint32_t offset,
                                             uint32_t length)
{
    uint64_t place = ((uint64_t)offset << 16 | length) * 0xC2B2AE3D27D4EB4Full;
    return sum ^ (number * 0x9E3779B97F4A7C15ull) ^ place;
}

/* An entry's checksum: of the `length` bytes kept in `kept` for `offset` of
 * block `number`, `length` at most a block. */
static inline uint64_t journal_checksum(const uint8_t *kept, uint64_t number, uint32_t offset,
                                        uint32_t length)
{
    /* whole words (kept_checksum reads 8 bytes at a time): a patch's tail counts too */
    uint32_t words = (length + 7u) & ~7u;
    return journal_checksum_from(kept_checksum(kept, words), number, offset, length);
}

/* A free slot, searched from writer->search_from, or -1 when all are valid. */
int journal_free_slot_search(const struct journal_writer *writer);
/* A free slot: the one the search starts from is usually free (entries are
 * freed in bulk), else journal_free_slot_search's answer. */
static inline int journal_free_slot(const struct journal_writer *writer)
{
    uint32_t slot = writer->search_from % writer->journal->slots;
    if (writer->journal->entries[slot].state != JOURNAL_VALID)
        return (int)slot;
    return journal_free_slot_search(writer);
}

/* Keeps `length` bytes (at most a block) for `offset` of block `number` in a
 * fresh slot (a full journal syncs `cache` and starts over); the slot, or an
 * error. The entry is valid only once its bytes and checksum are in place;
 * the caller puts the slot into the index (journal_record adds it, a patch
 * may take the place of the older patch it frees). */
static inline int journal_keep(struct journal_writer *writer, struct cache *cache, uint64_t number,
                               uint32_t offset, const uint8_t *bytes, uint32_t length)
{
    int slot = journal_free_slot(writer);
    if (slot < 0)
        slot = journal_start_over(writer, cache);
    if (slot < 0)
        return slot;
    struct journal *journal = writer->journal;
    struct journal_entry *entry = &journal->entries[slot];
    uint8_t *kept = journal_data(journal, (uint32_t)slot);
    uint64_t sum = kept_copy_checksummed(kept, bytes, length); /* journal_checksum's, copying */
    entry->block = number;
    entry->offset = (uint16_t)offset;
    entry->length = (uint16_t)length;
    entry->sequence = ++journal->next_sequence;
    entry->checksum = journal_checksum_from(sum, number, offset, length);
    __atomic_store_n(&entry->state, JOURNAL_VALID, __ATOMIC_RELEASE);
    writer->search_from = (uint32_t)slot + 1;
    writer->valid_count++;
    return slot;
}

/* The block's previous patch, if the one just kept in `newest` (`length`
 * bytes at `offset` of block `number`) covers all its bytes, is freed:
 * replayed in order it would be overwritten anyway, by the newest or by a
 * patch between them (the same place written again and again keeps one
 * entry, and the journal need not fold). Freed only after the newest is
 * valid, as a whole block's older entries; the newest takes its place in
 * the index, or is added to it when no patch is freed. */
static inline void journal_free_covered_patch(struct journal_writer *writer, uint32_t newest,
                                              uint64_t number, uint32_t offset, uint32_t length)
{
    uint32_t *way = &writer->newest_patch[number % JOURNAL_PATCH_WAYS];
    uint32_t previous = *way;
    *way = newest + 1;
    if (previous != 0 && previous - 1 != newest) {
        struct journal_entry *older = &writer->journal->entries[previous - 1];
        if (older->state == JOURNAL_VALID && older->block == number && older->offset >= offset &&
            (uint32_t)older->offset + older->length <= offset + length) {
            older->state = JOURNAL_FREE;
            journal_index_replace(&writer->index, previous - 1, newest, number);
            writer->valid_count--;
            return;
        }
    }
    journal_index_add(&writer->index, newest, number);
}

/* Keeps a patch: `length` bytes written at `offset` of block `number`
 * (BLK_PATCH). Replayed on top of the block as the disk and the older
 * entries leave it; a patch frees only an older patch it covers. As
 * journal_record otherwise; -E_INVALID for a range outside the block. */
static inline int journal_record_patch(struct journal_writer *writer, struct cache *cache,
                                       uint64_t number, uint32_t offset, const uint8_t *bytes,
                                       uint32_t length)
{
    if (length == 0 || !cache_range_fits(offset, length))
        return -E_INVALID;
    if (writer->valid_count >= journal_compact_at(writer->journal)) {
        int error = journal_compact(writer, cache);
        if (error != 0)
            return error;
    }
    int slot = journal_keep(writer, cache, number, offset, bytes, length);
    if (slot < 0)
        return slot;
    journal_free_covered_patch(writer, (uint32_t)slot, number, offset, length);
    return 0;
}
