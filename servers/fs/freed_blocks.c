/* freed_blocks.c: the FS owner's freed disk blocks (freed_blocks.h): noted
 * through the device's forget, kept from allocation through its
 * may_allocate until BLK was told, told per shard in BLK_RETIRE lists. FS's
 * own borrowed block of one goes at once (block_pins_forget). */
#include "freed_blocks.h"
#include "block_client.h"
#include "block_pins.h"
#include "journal.h"
#include <formica/errors.h>
#include <formica/ica.h>
#include <formica/storage.h>
#include <stdio.h>

#define LIST_CAPACITY (ICA_PAYLOAD_BYTES / sizeof(uint32_t)) /* blocks one BLK_RETIRE names */

static uint32_t keys[FREED_BLOCKS_CAPACITY];
static struct block_set noted;              /* disk blocks not told yet */
static bool unsealed[SERVER_INSTANCES_MAX]; /* shards told as of a sequence not known yet */
static uint32_t unsealed_count;
static const struct ext2_device *device; /* BLK's: its block size is the file system's */
uint32_t freed_blocks_untold;
static bool failure_logged;

static void set_unsealed(uint32_t shard, bool value)
{
    unsealed_count += value - unsealed[shard];
    unsealed[shard] = value;
}

static void count_untold(void)
{
    freed_blocks_untold = noted.count + unsealed_count;
}

static uint64_t disk_block_of(uint64_t block)
{
    return block * device->block_size / STORAGE_BLOCK_BYTES;
}

/* The noted blocks of `shard` as one or more BLK_RETIRE lists, the last
 * with `flags`; 0 or the first error. */
static long tell_shard(uint32_t shard, uint64_t sequence, uint32_t flags)
{
    static uint32_t list[LIST_CAPACITY];
    uint32_t count = 0;
    long error = 0;
    for (uint32_t slot = 0; slot < noted.capacity && error == 0; slot++) {
        uint32_t block = noted.keys[slot];
        if (block == UINT32_MAX || block_client_shard_of(block) != shard)
            continue;
        list[count++] = block;
        if (count == LIST_CAPACITY) {
            error = block_client_retire(shard, list, count, sequence, 0);
            count = 0;
        }
    }
    if (error == 0)
        error = block_client_retire(shard, list, count, sequence, flags);
    return error;
}

static bool has_noted(uint32_t shard)
{
    for (uint32_t slot = 0; slot < noted.capacity; slot++)
        if (noted.keys[slot] != UINT32_MAX && block_client_shard_of(noted.keys[slot]) == shard)
            return true;
    return false;
}

static void log_failure(long error)
{
    if (!failure_logged)
        printf("fs: telling BLK of freed blocks failed: %s; they are not reused until it "
               "succeeds\n",
               error_text(error));
    failure_logged = true;
}

long freed_blocks_tell(uint64_t sequence)
{
    long first_error = 0;
    for (uint32_t shard = 0; shard < block_client_shards.count; shard++) {
        if (!unsealed[shard] && !has_noted(shard))
            continue;
        long error = tell_shard(shard, sequence, BLK_RETIRE_SEAL);
        if (error == 0)
            set_unsealed(shard, false);
        else if (first_error == 0)
            first_error = error;
    }
    if (first_error != 0) {
        log_failure(first_error);
        return first_error;
    }
    block_set_clear(&noted);
    failure_logged = false;
    count_untold();
    return 0;
}

/* The set is full in the middle of a request: told now, as of a sequence
 * not known yet (no replica's view passes them until the request's end
 * seals it), so they may be handed out again. */
static void tell_early(void)
{
    for (uint32_t shard = 0; shard < block_client_shards.count; shard++) {
        if (!has_noted(shard))
            continue;
        long error = tell_shard(shard, BLK_RETIRE_UNSEALED, 0);
        if (error != 0) {
            log_failure(error);
            return; /* kept noted: not handed out, told again later */
        }
        set_unsealed(shard, true);
    }
    block_set_clear(&noted);
}

static void note(void *context, uint64_t block)
{
    (void)context;
    uint32_t disk_block = (uint32_t)disk_block_of(block);
    block_pins_forget(disk_block);
    if (!block_set_put(&noted, disk_block, 0)) {
        tell_early();
        if (!block_set_put(&noted, disk_block, 0))
            printf("fs: freed disk block %u not noted: BLK is not told\n", disk_block);
    }
    count_untold();
}

static bool may_allocate(void *context, uint64_t block)
{
    (void)context;
    return noted.count == 0 || !block_set_contains(&noted, (uint32_t)disk_block_of(block));
}

void freed_blocks_attach(struct ext2_device *blk_device)
{
    block_set_init(&noted, keys, NULL, FREED_BLOCKS_CAPACITY);
    device = blk_device;
    blk_device->forget = note;
    blk_device->may_allocate = may_allocate;
}

long freed_blocks_retire_all(void)
{
    long first_error = 0;
    for (uint32_t shard = 0; shard < block_client_shards.count; shard++) {
        long error = block_client_retire(shard, NULL, 0, BLK_RETIRE_UNSEALED, BLK_RETIRE_ALL);
        if (error == 0)
            set_unsealed(shard, true);
        else if (first_error == 0)
            first_error = error;
    }
    count_untold();
    if (first_error != 0)
        printf("fs: retiring the blocks lent before this start failed: %s\n",
               error_text(first_error));
    return first_error;
}
