/* kept_stores.h: the bytes of the pager's stores in flight, kept in its kept
 * region until the backend acknowledges them, so a restarted pager can give
 * a block whose store never arrived back to its process (docs/recovery.md).
 * Plain memory in, plain memory out: the caller names the bytes. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 16 slots of 64 KiB; a larger block takes consecutive slots (1 MiB, the
 * largest pager block, takes all 16). */
#define KEPT_STORE_SLOTS 16u
#define KEPT_STORE_SLOT_BYTES (64u << 10)

/* One slot: the first slot of a store has its record, the others say only
 * that they are taken (`part` > 0). A slot counts once `finished` is set. */
struct kept_store_slot {
    uint64_t finished;
    uint32_t pid, block;
    uint64_t bytes, sum;
    uint32_t slots, part;
};

struct kept_stores {
    struct kept_store_slot slots[KEPT_STORE_SLOTS];
    uint8_t bytes[KEPT_STORE_SLOTS][KEPT_STORE_SLOT_BYTES];
};

/* True when a store of `block_bytes` (at most the whole area) finds room now. */
bool kept_stores_have_room(const struct kept_stores *stores, uint32_t block_bytes);
/* Keeps `block_bytes` bytes of pid's `block` whose checksum (kept_checksum)
 * is `sum`; false when there is no room. The record counts only once the
 * bytes are whole. */
bool kept_stores_keep(struct kept_stores *stores, uint32_t pid, uint32_t block,
                      const uint8_t *bytes, uint32_t block_bytes, uint64_t sum);
/* The block's store ended (acknowledged, failed or taken back): its slots free. */
void kept_stores_end(struct kept_stores *stores, uint32_t pid, uint32_t block);
/* Copies the kept bytes of pid's `block` into `into` (block_bytes of them);
 * false when none are kept whole (no record, another size, a bad checksum). */
bool kept_stores_copy_back(const struct kept_stores *stores, uint32_t pid, uint32_t block,
                           uint8_t *into, uint32_t block_bytes);
/* Frees every slot of process `pid` (its client ended). */
void kept_stores_drop(struct kept_stores *stores, uint32_t pid);
