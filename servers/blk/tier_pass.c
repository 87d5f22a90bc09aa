/* tier_pass.c: the NVM tier's write-back passes (tier.h). A pass takes
 * every dirty line at once, sorts them by block, writes them to the disk in
 * runs of consecutive blocks (up to TIER_RUN_BLOCKS, 256 KiB), then
 * DK_FLUSH, and only then tags them clean (stores, one fence): a kill
 * before that leaves them dirty for the next pass. Block 0's fingerprint in
 * the header follows the disk before its line goes clean. */
#include "cache_internal.h"
#include "tier.h"
#include <formica/errors.h>
#include <formica/kept_region.h>
#include <formica/nvm_persist.h>
#include <stdio.h>
#include <stdlib.h>

/* Heapsort of `count` block numbers (no allocation, O(n log n)). */
static void sift_down(uint64_t *keys, uint32_t root, uint32_t count)
{
    for (uint32_t child; (child = 2 * root + 1) < count; root = child) {
        if (child + 1 < count && keys[child + 1] > keys[child])
            child++;
        if (keys[root] >= keys[child])
            return;
        uint64_t swap = keys[root];
        keys[root] = keys[child];
        keys[child] = swap;
    }
}

static void sort_blocks(uint64_t *keys, uint32_t count)
{
    for (uint32_t root = count / 2; root-- > 0;)
        sift_down(keys, root, count);
    for (uint32_t end = count; end-- > 1;) {
        uint64_t largest = keys[0];
        keys[0] = keys[end];
        keys[end] = largest;
        sift_down(keys, 0, end);
    }
}

/* The dirty lines' blocks, sorted, and each one's line (found through the
 * index); how many. */
static uint32_t gather_dirty(struct cache *cache)
{
    struct tier *tier = cache->tier;
    uint32_t count = 0;
    for (uint32_t line = 0; line < cache->capacity; line++) {
        const struct cache_block *block = &cache->blocks[line];
        if (block->valid && block->dirty && !block->busy)
            tier->pass_order[count++] = block->number;
    }
    sort_blocks(tier->pass_order, count);
    for (uint32_t i = 0; i < count; i++)
        tier->pass_lines[i] = (uint32_t)(cache_lookup(cache, tier->pass_order[i]) - cache->blocks);
    return count;
}

/* How many of the sorted dirty lines from `first` make one run. */
static uint32_t run_from(const struct tier *tier, uint32_t first, uint32_t count)
{
    uint32_t length = 1;
    while (first + length < count && length < TIER_RUN_BLOCKS &&
           tier->pass_order[first + length] == tier->pass_order[first] + length)
        length++;
    return length;
}

/* Writes one run (lines already on the disk, write-through's, are not
 * written again); false when the disk refused it (logged). */
static bool write_run(struct cache *cache, uint32_t first, uint32_t length)
{
    struct tier *tier = cache->tier;
    const uint8_t *buffers[TIER_RUN_BLOCKS];
    bool all_on_disk = true;
    for (uint32_t i = 0; i < length; i++) {
        const struct cache_block *block = &cache->blocks[tier->pass_lines[first + i]];
        buffers[i] = block->data;
        all_on_disk = all_on_disk && block->on_disk;
    }
    if (all_on_disk)
        return true;
    int error = cache->disk.write(cache->disk.context, tier->pass_order[first], length, buffers);
    if (error != 0) {
        printf("blk: tier: write-back of blocks %lu..%lu failed: %s; those lines stay dirty\n",
               (unsigned long)tier->pass_order[first],
               (unsigned long)(tier->pass_order[first] + length - 1), error_text(error));
        return false;
    }
    tier->writeback_runs++;
    tier->writeback_bytes += (uint64_t)length * CACHE_BLOCK_BYTES;
    return true;
}

/* Block 0 reached the disk: the header's fingerprint follows it. */
static void follow_block_zero(struct cache *cache, const struct cache_block *zero)
{
    struct tier *tier = cache->tier;
    tier->identity.fingerprint = kept_checksum(zero->data, CACHE_BLOCK_BYTES);
    tier_write_header(tier, 0);
}

/* The lines of the runs written (not `failed`) become clean: stores, then
 * one fence. */
static void clean_written(struct cache *cache, uint32_t count, const bool *failed)
{
    struct tier *tier = cache->tier;
    for (uint32_t i = 0; i < count; i++) {
        if (failed[i])
            continue;
        uint32_t line = tier->pass_lines[i];
        struct cache_block *block = &cache->blocks[line];
        if (block->number == 0)
            follow_block_zero(cache, block);
        uint64_t tag = tier_tag(line, block->number, TIER_CLEAN);
        nvm_write(&tier->tags[line], &tag, sizeof tag);
        nvm_flush(&tier->tags[line], sizeof tag);
        block->dirty = false;
        block->on_disk = false;
        cache->stats.dirty--;
        cache->stats.written_back++;
    }
    nvm_fence();
}

int tier_pass(struct cache *cache)
{
    struct tier *tier = cache->tier;
    uint32_t count = gather_dirty(cache);
    if (count == 0)
        return 0;
    tier_flush_mapped_stores(cache, true); /* before their tags can go clean */
    nvm_fence(); /* the lines' bytes durable as the disk will get them (block 0's fingerprint) */
    bool *failed = calloc(count, sizeof(bool));
    if (failed == NULL)
        return -E_NO_MEMORY;
    int first_error = 0;
    for (uint32_t first = 0; first < count;) {
        uint32_t length = run_from(tier, first, count);
        if (!write_run(cache, first, length)) {
            first_error = -E_IO;
            for (uint32_t i = 0; i < length; i++)
                failed[first + i] = true;
        }
        first += length;
    }
    int flushed = cache->disk.flush != NULL ? cache->disk.flush(cache->disk.context) : 0;
    if (flushed != 0) {
        printf("blk: tier: DK_FLUSH after a pass failed: %s; every line stays dirty\n",
               error_text(flushed));
        first_error = flushed;
    } else {
        clean_written(cache, count, failed);
    }
    tier->passes++;
    tier->pass_failures += first_error != 0;
    free(failed);
    return first_error;
}

void tier_report(const struct tier *tier, const struct cache *cache, struct blk_tier_report *report)
{
    *report = (struct blk_tier_report){0};
    if (tier == NULL)
        return;
    report->state = tier->state;
    report->nvm_bytes = tier->bytes;
    report->disk_bytes = tier->identity.sectors * 512;
    for (size_t i = 0; i + 1 < sizeof report->refusal && tier->refusal[i] != '\0'; i++)
        report->refusal[i] = tier->refusal[i];
    if (cache->tier != tier)
        return; /* too small or detached: the counters are the DRAM cache's */
    report->hits = cache->stats.hits;
    report->misses = cache->stats.misses;
    report->read_ahead = cache->stats.read_ahead;
    report->bypasses = tier->bypasses;
    report->fills = tier->fills;
    report->direct_lends = tier->direct_binds;
    report->lend_copies = tier->lend_copies;
    report->dirty_lines = cache->stats.dirty;
    report->cached_lines = cache->stats.cached;
    report->lines = tier->lines_count;
    report->sets = tier->sets;
    report->ways = tier->ways;
    report->writeback_runs = tier->writeback_runs;
    report->writeback_bytes = tier->writeback_bytes;
    report->passes = tier->passes;
    report->pass_failures = tier->pass_failures;
    report->write_through = tier->write_through;
    report->mapped_evictions = tier->mapped_takes;
}
