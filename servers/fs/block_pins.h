/* block_pins.h: BLK's cached blocks that FS borrows and lends on. FS asks
 * BLK for a block with BLK_LEND and keeps the control ICA the lend came
 * with (one a block), so a readblock of that block is answered by FS
 * itself, the block lent on: no crossing to BLK and back (docs/storage.md,
 * "FS lends on what it borrows"). */
#pragma once
#include <stdint.h>

/* Blocks FS borrows at most: below BLK's per-client lend limit (64), with
 * FS's other control and data ICAs inside ICA_PER_PROCESS. */
#define BLOCK_PINS 48u

/* block_pins_answer's answer when FS does not borrow the block and does not
 * borrow it now: the request goes to BLK as before. */
#define BLOCK_NOT_PINNED (INT64_MIN + 2)

/* The answer to a one-block readblock of `disk_block` (owned by shard
 * `shard`) in the control ICA `control`: the block lent on with it
 * (STORAGE_BLOCK_BYTES), borrowed first when it may be, or BLOCK_NOT_PINNED. */
long block_pins_answer(uint64_t control, uint64_t disk_block, uint32_t shard);

/* The kernel refused to lend on the block of the last answer (its lender,
 * a BLK shard, has ended): every borrowed block is let go, and that answer's
 * block and shard are given back to be asked of BLK. */
void block_pins_refused(uint64_t *disk_block, uint32_t *shard);

/* Every borrowed block let go (their control ICAs freed). */
void block_pins_release_all(void);

/* What the pins did, for FS's statistics. */
struct block_pin_counts {
    uint64_t answered; /* readblocks answered with a borrowed block */
    uint64_t borrowed; /* blocks borrowed from BLK */
    uint64_t kept_lent_on; /* replacements passed over: the block still lent on */
};
extern struct block_pin_counts block_pin_counts;
