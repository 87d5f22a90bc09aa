/* cache.c: the cache's operations: set-up, read (hit, or a miss that reads
 * the block and, after a miss on the block before it, the next
 * CACHE_READ_AHEAD blocks in the same disk transfer), write, statistics. */
#include "cache_internal.h"
#include "tier.h"
#include <formica/errors.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t bucket_count_for(uint32_t capacity)
{
    uint32_t count = 1;
    while (count < capacity)
        count <<= 1;
    return count;
}

/* Block memory: from `memory` while it gives some, then from one heap area. */
static int allocate_block_memory(struct cache *cache)
{
    uint32_t done = 0;
    while (done < cache->capacity && cache->memory.allocate != NULL &&
           cache->memory.allocate(cache->memory.context, &cache->blocks[done].data,
                                  &cache->blocks[done].handle) == 0)
        done++;
    if (done == cache->capacity)
        return 0;
    uint8_t *data = malloc((size_t)(cache->capacity - done) * CACHE_BLOCK_BYTES);
    if (data == NULL)
        return -E_NO_MEMORY;
    for (uint32_t i = done; i < cache->capacity; i++)
        cache->blocks[i].data = data + (size_t)(i - done) * CACHE_BLOCK_BYTES;
    return 0;
}

int cache_init(struct cache *cache, uint32_t capacity, const struct cache_disk *disk,
               const struct cache_memory *memory)
{
    if (capacity < 2 * CACHE_MAX_RUN)
        return -E_INVALID;
    memset(cache, 0, sizeof(*cache));
    cache->disk = *disk;
    if (memory != NULL)
        cache->memory = *memory;
    cache->capacity = capacity;
    uint32_t buckets = bucket_count_for(capacity);
    cache->bucket_mask = buckets - 1;
    cache->blocks = calloc(capacity, sizeof(struct cache_block));
    cache->buckets = calloc(buckets, sizeof(struct cache_block *));
    if (cache->blocks == NULL || cache->buckets == NULL || allocate_block_memory(cache) != 0)
        return -E_NO_MEMORY;
    cache->last_miss = UINT64_MAX;
    cache->stats.capacity = capacity;
    cache->shards = 1;
    cache->read_ahead = CACHE_READ_AHEAD;
    return 0;
}

int cache_init_tier(struct cache *cache, struct tier *tier, const struct cache_disk *disk)
{
    memset(cache, 0, sizeof(*cache));
    cache->disk = *disk;
    cache->capacity = tier->lines_count;
    uint32_t buckets = bucket_count_for(cache->capacity);
    cache->bucket_mask = buckets - 1;
    cache->blocks = calloc(cache->capacity, sizeof(struct cache_block));
    cache->buckets = calloc(buckets, sizeof(struct cache_block *));
    if (cache->blocks == NULL || cache->buckets == NULL)
        return -E_NO_MEMORY;
    for (uint32_t i = 0; i < cache->capacity; i++)
        cache->blocks[i].data = tier_line_data(tier, i);
    cache->last_miss = UINT64_MAX;
    cache->stats.capacity = cache->capacity;
    cache->shards = 1;
    cache->read_ahead = TIER_READ_AHEAD;
    cache->tier = tier;
    return 0;
}

void cache_release(struct cache *cache)
{
    free(cache->blocks);
    free(cache->buckets);
    cache->blocks = NULL;
    cache->buckets = NULL;
}

void cache_set_shard(struct cache *cache, uint32_t shard, uint32_t shards)
{
    cache->shard = shard;
    cache->shards = shards;
}

/* How many blocks a miss on `number` reads: 1, or more on a sequential miss
 * (the miss after the last one in the shard's blocks), up to the end of
 * `number`'s stripe: the next stripe is another shard's. */
static uint32_t run_length(struct cache *cache, uint64_t number)
{
    if (cache->last_miss == UINT64_MAX ||
        number != blk_shard_next_block(cache->last_miss, cache->shards))
        return 1;
    uint32_t most = blk_run_part(number, 1 + cache->read_ahead, 0, cache->shards).blocks;
    uint32_t count = 1;
    while (count < most && number + count < cache->disk.blocks &&
           cache_lookup(cache, number + count) == NULL)
        count++;
    return count;
}

static void release_slots(struct cache_block **slots, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        slots[i]->busy = false;
}

/* A slot for block `number`: anywhere (DRAM), or a line of its set (tier;
 * a line only mappings see is taken for the block asked, `asked`, not for
 * read-ahead). */
static int take_slot_for(struct cache *cache, uint64_t number, bool asked,
                         struct cache_block **slot)
{
    if (cache->tier != NULL)
        return tier_take_line(cache, number, asked, slot);
    return cache_take_slot(cache, slot);
}

/* Reads `count` blocks from `number` into fresh slots (fewer read ahead
 * when the tier's set has no more lines); *first is `number`'s. */
static int fill(struct cache *cache, uint64_t number, uint32_t count, struct cache_block **first)
{
    struct cache_block *slots[CACHE_FILL_MAX];
    uint8_t *buffers[CACHE_FILL_MAX] = {0};
    for (uint32_t i = 0; i < count; i++) {
        int error = take_slot_for(cache, number + i, i == 0, &slots[i]);
        if (error != 0 && i > 0 && cache->tier != NULL) {
            count = i;
            break;
        }
        if (error != 0) {
            release_slots(slots, i);
            return error;
        }
        buffers[i] = slots[i]->data;
    }
    int error = cache->disk.read(cache->disk.context, number, count, buffers);
    release_slots(slots, count);
    if (error != 0)
        return error;
    for (uint32_t i = 0; i < count; i++) {
        slots[i]->number = number + i;
        slots[i]->valid = true;
        slots[i]->dirty = false;
        slots[i]->referenced = i == 0; /* read-ahead blocks must earn their second chance */
        cache_hash_insert(cache, slots[i]);
    }
    if (cache->tier != NULL)
        tier_filled(cache, slots, count); /* the data durable, then the tags name it */
    cache->stats.cached += count;
    cache->stats.read_ahead += count - 1;
    cache->last_miss = number + count - 1;
    *first = slots[0];
    return 0;
}

/* A miss: the block read (with read-ahead) into the cache (apart, so a hit
 * saves no registers). In the tier, a read that finds no line bypasses it,
 * a write waits for a pass. */
static int miss(struct cache *cache, uint64_t number, struct cache_block **found, bool write)
{
    cache->stats.misses++;
    int error = fill(cache, number, run_length(cache, number), found);
    if (error == -E_BUSY && cache->tier != NULL && !write)
        return tier_bypass_read(cache, number, found);
    if (error == -E_BUSY && cache->tier != NULL && (error = tier_pass(cache)) == 0)
        error = fill(cache, number, 1, found);
    if (error == 0)
        (*found)->referenced = true;
    return error;
}

/* The cached block `number`, read (with read-ahead) on a miss. */
static inline int find_or_fill(struct cache *cache, uint64_t number, struct cache_block **found,
                               bool write)
{
    if (!cache_owns(cache, number))
        return -E_INVALID;
    struct cache_block *block = cache_lookup(cache, number);
    if (block == NULL)
        return miss(cache, number, found, write);
    cache_note_hit(cache, block);
    *found = block;
    return 0;
}

int cache_read(struct cache *cache, uint64_t number, void *out)
{
    struct cache_block *block;
    int error = find_or_fill(cache, number, &block, false);
    if (error == 0)
        memcpy(out, block->data, CACHE_BLOCK_BYTES);
    return error;
}

int cache_lend_missing(struct cache *cache, uint64_t number, uint64_t *handle)
{
    struct cache_block *block;
    int error = find_or_fill(cache, number, &block, false);
    if (error == 0)
        *handle = cache_lend_handle(cache, block);
    return error;
}

uint64_t cache_lend_line(struct cache *cache, struct cache_block *block)
{
    return tier_lend_handle(cache, block);
}

int cache_patch_line(struct cache *cache, struct cache_block *block, uint32_t offset,
                     const void *in, uint32_t length)
{
    block->referenced = true;
    return tier_write_in_place(cache, block, offset, in, length);
}

int cache_write(struct cache *cache, uint64_t number, const void *in)
{
    if (!cache_owns(cache, number))
        return -E_INVALID;
    struct cache_block *block = cache_lookup(cache, number);
    if (cache->tier != NULL)
        return block != NULL ? cache_patch_line(cache, block, 0, in, CACHE_BLOCK_BYTES)
                             : tier_write_new(cache, number, in);
    if (block == NULL) {
        int error = cache_take_slot(cache, &block);
        if (error != 0)
            return error;
        block->busy = false;
        block->number = number;
        block->valid = true;
        block->dirty = false;
        cache_hash_insert(cache, block);
        cache->stats.cached++;
    }
    memcpy(block->data, in, CACHE_BLOCK_BYTES);
    block->referenced = true;
    cache_mark_dirty(cache, block);
    return 0;
}

int cache_patch_missing(struct cache *cache, uint64_t number, uint32_t offset, const void *in,
                        uint32_t length)
{
    struct cache_block *block;
    int error = find_or_fill(cache, number, &block, true);
    if (error == -E_BUSY && cache->tier != NULL)
        return tier_patch_around(cache, number, offset, in, length);
    if (error == 0 && cache->tier != NULL)
        return cache_patch_line(cache, block, offset, in, length);
    if (error == 0)
        cache_patch_block(cache, block, offset, in, length);
    return error;
}

int cache_patch_any(struct cache *cache, uint64_t number, uint32_t offset, const void *in,
                    uint32_t length)
{
    if (cache->tier == NULL)
        return cache_patch(cache, number, offset, in, length);
    if (!cache_range_fits(offset, length))
        return -E_INVALID;
    struct cache_block *block = cache_use_cached(cache, number);
    if (block == NULL)
        return cache_patch_missing(cache, number, offset, in, length);
    return cache_patch_line(cache, block, offset, in, length);
}

void cache_get_stats(const struct cache *cache, struct cache_stats *stats)
{
    *stats = cache->stats;
}

const uint8_t *cache_dirty_contents(struct cache *cache, uint64_t number)
{
    struct cache_block *block = cache_lookup(cache, number);
    return block != NULL && block->valid && block->dirty ? block->data : NULL;
}

bool cache_block_lent(const struct cache *cache, const struct cache_block *block)
{
    return block->handle != 0 && cache->memory.pinned != NULL &&
           cache->memory.pinned(cache->memory.context, block->handle);
}

/* A cached block out of the hash table, its bytes kept for its borrowers
 * (a dirty one written back first). */
static void retire(struct cache *cache, struct cache_block *block)
{
    if (block->dirty) {
        int error = cache_write_back_run(cache, block);
        if (error != 0) {
            printf("blk: write-back of freed block %lu failed: %s; its bytes are dropped\n",
                   (unsigned long)block->number, error_text(error));
            block->dirty = false;
            cache->stats.dirty--;
        }
    }
    cache_hash_remove(cache, block);
    block->valid = false;
    block->retired = true;
    cache->stats.cached--;
    cache->stats.retired++;
}

int cache_retire(struct cache *cache, uint64_t number)
{
    if (!cache_owns(cache, number))
        return -E_INVALID;
    if (cache->tier != NULL) { /* a copy keeps the old bytes; a line lent itself is retired */
        struct cache_block *line = cache_lookup(cache, number);
        if (line != NULL && line->bound && cache_block_lent(cache, line))
            tier_retire_lent_line(cache, line);
        else if (line != NULL)
            tier_unbind_copy(cache, line);
        return 0;
    }
    struct cache_block *block = cache_lookup(cache, number);
    if (block == NULL || block->busy)
        return 0;
    if (block->dirty && !cache_block_lent(cache, block))
        return 0; /* nobody sees it: the next owner's bytes overwrite it in place */
    if (cache_block_lent(cache, block) && cache->memory.revoke != NULL)
        cache->memory.revoke(cache->memory.context, block->handle, false); /* mappings end */
    retire(cache, block);
    return 0;
}

int cache_lent_for_stores(struct cache *cache, uint64_t number)
{
    struct cache_block *block = cache_lookup(cache, number);
    if (block == NULL || !block->valid)
        return -E_NOT_FOUND;
    if (cache->tier != NULL)
        return tier_lent_for_stores(cache, block);
    block->stored_into = true;
    if (!block->dirty)
        cache_mark_dirty(cache, block);
    return 0;
}

uint64_t cache_count_lent(const struct cache *cache)
{
    uint64_t lent = 0;
    for (uint32_t i = 0; i < cache->capacity; i++)
        if ((cache->blocks[i].valid || cache->blocks[i].retired) &&
            cache_block_lent(cache, &cache->blocks[i]))
            lent++;
    return lent;
}

void cache_retire_lent(struct cache *cache)
{
    if (cache->tier != NULL) {
        for (uint32_t i = 0; i < cache->capacity; i++) {
            struct cache_block *line = &cache->blocks[i];
            if (line->bound && cache_block_lent(cache, line))
                tier_retire_lent_line(cache, line);
            else
                tier_unbind_copy(cache, line);
        }
        return;
    }
    for (uint32_t i = 0; i < cache->capacity; i++) {
        struct cache_block *block = &cache->blocks[i];
        if (block->valid && !block->busy && cache_block_lent(cache, block))
            retire(cache, block);
    }
}
