/* kept_journal.h: BLK's journal of acknowledged writes, in its kept region
 * (formica/kept_region.h): every block BLK_WRITE puts dirty into the cache
 * is also copied here before the answer, and every BLK_PATCH keeps just its
 * bytes, so a BLK that ends loses nothing it acknowledged: the restarted BLK
 * replays the journal into its cache in order and writes it to the disk.
 * Cleared by every successful sync. */
#pragma once
#include "cache.h"
#include <formica/kept_region.h>
#include <formica/storage.h>
#include <stdint.h>

#define JOURNAL_SLOTS 256                   /* 1 MiB of blocks; when full, the cache is synced */
#define JOURNAL_MAGIC 0x314c4e524a4b4c42ull /* "BLKJRNL1" */
#define JOURNAL_VERSION 2u
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

struct journal {
    struct kept_header header;
    uint64_t next_sequence;
    struct journal_entry entries[JOURNAL_SLOTS];
    uint8_t data[JOURNAL_SLOTS][STORAGE_BLOCK_BYTES];
};

/* Copies block `number`'s new bytes into the journal (a fresh slot; the
 * block's older entry is freed after). A full journal syncs `cache` first
 * and is cleared. 0 or an error of the sync. */
int journal_record(struct journal *journal, struct cache *cache, uint64_t number,
                   const uint8_t *bytes);
/* Keeps a patch: `length` bytes written at `offset` of block `number`
 * (BLK_PATCH). Replayed on top of the block as the disk and the older
 * entries leave it; a patch frees nothing. As journal_record otherwise. */
int journal_record_patch(struct journal *journal, struct cache *cache, uint64_t number,
                         uint32_t offset, const uint8_t *bytes, uint32_t length);
/* Forgets every entry (their blocks are on the disk). */
void journal_clear(struct journal *journal);
/* After a restart: writes every valid entry (bad checksums are skipped) into
 * `cache` in sequence order, syncs it and clears the journal. Returns how
 * many blocks it replayed, or an error (the journal is then kept). */
long journal_replay(struct journal *journal, struct cache *cache);
