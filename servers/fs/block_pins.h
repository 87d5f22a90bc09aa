/* block_pins.h: BLK's cached blocks that FS borrows and lends on. FS asks
 * BLK for a block with BLK_LEND and keeps the control ICA the lend came
 * with (one a block), so a readblock of that block is answered by FS
 * itself, the block lent on: no crossing to BLK and back (docs/storage.md,
 * "FS lends on what it borrows"). */
#pragma once
#include <stdint.h>

/* Blocks one FS borrows at most: below BLK's per-client lend limit (64),
 * with FS's other control and data ICAs inside ICA_PER_PROCESS; and at most
 * BLOCK_PINS_ALL for all FS instances together (a share of the control
 * ICA pool), at least BLOCK_PINS_LEAST each. */
#define BLOCK_PINS 48u
#define BLOCK_PINS_ALL 1024u
#define BLOCK_PINS_LEAST 8u

/* Allocates the control ICAs of the blocks this FS borrows (its share
 * when there are `instances` FS instances), all at once: FS's footprint
 * does not grow while it serves. Fewer when the pool refuses (logged). */
void block_pins_open(uint32_t instances);

/* block_pins_answer's answer when FS does not borrow the block and does not
 * borrow it now: the request goes to BLK as before. */
#define BLOCK_NOT_PINNED (INT64_MIN + 2)

/* The answer to a one-block readblock of `disk_block` (owned by shard
 * `shard`) in the control ICA `control`: the block lent on with it
 * (STORAGE_BLOCK_BYTES), borrowed first when it may be, or BLOCK_NOT_PINNED;
 * -E_STALE when BLK refused an FS replica's view as too old. */
long block_pins_answer(uint64_t control, uint64_t disk_block, uint32_t shard);

/* Disk block `disk_block` was freed (the owner) or may have been (a
 * replica told of a metadata change: all of them): its slot counts as
 * empty, so it is never lent on again; the slot's lend of it ends at the
 * slot's next borrow. BLK meanwhile keeps the page's old bytes for whoever
 * still holds it (docs/storage.md, "Freed blocks and lent pages"). */
void block_pins_forget(uint64_t disk_block);
void block_pins_forget_all(void);

/* The kernel refused, with `error`, to lend on `disk_block` of shard
 * `shard` in an answer (-E_SERVER_ENDED: its lender, the shard, has ended):
 * every borrowed block is let go (logged); the request goes to BLK. */
void block_pins_refused(uint64_t disk_block, uint32_t shard, long error);
