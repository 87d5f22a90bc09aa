/* tier_lines.c: the cache's steps on the NVM tier's lines (tier.h), each
 * made durable in the order docs/design.md gives, through the flush layer:
 * a fill frees the old tag, persists the data, then tags the line clean; a
 * write into a line tags it dirty first, then flushes its data (the next
 * fence makes it durable); a new line's data is persisted before its tag
 * names it; a barrier is one fence. CLOCK runs within the block's set,
 * taking a line only mappings see (theirs revoked: mapped_clock.c) when no
 * line nobody borrows is left; reads that find no line, and long sequential
 * write streams, bypass. */
#include "cache_internal.h"
#include "mapped_clock.h"
#include "tier.h"
#include <formica/errors.h>
#include <formica/nvm_persist.h>
#include <stdio.h>
#include <string.h>

static uint32_t line_of(const struct cache *cache, const struct cache_block *block)
{
    return (uint32_t)(block - cache->blocks);
}

static void store_tag(struct tier *tier, uint32_t line, uint64_t block, enum tier_line_state state)
{
    nvm_store64_persist(&tier->tags[line], tier_tag(line, block, state));
}

void tier_unbind_copy(struct cache *cache, struct cache_block *block)
{
    if (block->bound)
        return; /* the line's own block ICA: it stays with the line */
    if (block->copy != 0)
        cache->tier->pool.line[block->copy - 1] = 0;
    block->copy = 0;
    block->handle = 0;
}

/* How far a set's hand looks for a line nobody borrows while the set's
 * last miss found none: asking whether a line is lent is a system call, and
 * a turn over a set all lent into mappings would cost one per way at every
 * fault (as cache_clock.c's CLOCK_LOOK_WHILE_ALL_LENT). */
#define SET_LOOK_WHILE_ALL_LENT 8u

/* Neither busy nor dirty: a line whose bytes may give way once nobody
 * borrows it (a dirty line's bytes are the disk's future: a pass first). */
static bool may_give_way(const struct cache_block *block)
{
    return !block->busy && !(block->valid && block->dirty);
}

/* CLOCK within the set: a free line, else a clean unreferenced one (a
 * referenced one loses its bit and is passed once); dirty and busy lines,
 * and lines lent (themselves or their copy), are no victims here. After a
 * turn that met no line nobody borrows there is none (a second turn only
 * finds the bits it cleared). `briefly`: only the next few ways, the hand
 * left where it was when none is found there. */
static struct cache_block *unlent_victim(struct cache *cache, uint32_t set, bool briefly)
{
    struct tier *tier = cache->tier;
    uint32_t first = set * tier->ways, hand = tier->hands[set];
    uint32_t steps = 2 * tier->ways + 1;
    if (briefly && steps > SET_LOOK_WHILE_ALL_LENT)
        steps = SET_LOOK_WHILE_ALL_LENT;
    bool met_unlent = false;
    for (uint32_t step = 0; step < steps; step++) {
        if (step == tier->ways && !met_unlent)
            break;
        uint32_t way = tier->hands[set];
        tier->hands[set] = (way + 1) % tier->ways;
        struct cache_block *block = &cache->blocks[first + way];
        if (!may_give_way(block) || cache_block_lent(cache, block))
            continue;
        met_unlent = true;
        if (!block->valid || !block->referenced)
            return block;
        block->referenced = false;
    }
    if (briefly || !met_unlent)
        tier->hands[set] = hand;
    return NULL;
}

/* A clean line of the set that only mappings see (mapped_clock.h), its
 * mappings ended: the mapper's next access faults and finds the block anew.
 * NULL when every line is dirty, busy or held otherwise. */
static struct cache_block *mapped_victim(struct cache *cache, uint32_t set)
{
    struct tier *tier = cache->tier;
    struct mapped_clock clock = {
        .blocks = &cache->blocks[set * tier->ways],
        .count = tier->ways,
        .hand = &tier->hands[set],
        .may_take = may_give_way,
        .first_take_note = "blk: tier: every line of a set lent: taking lines only mappings see "
                           "(their mappings revoked; the next access faults them back)",
    };
    struct cache_block *victim = mapped_clock_victim(cache, &clock);
    tier->mapped_takes += victim != NULL;
    return victim;
}

/* The set's victim: a line nobody borrows, else (may_revoke) one only
 * mappings see; a set whose last miss found every line lent looks only a
 * few ways for the first, and all of them only when nothing can be revoked. */
static struct cache_block *set_victim(struct cache *cache, uint32_t set, bool may_revoke)
{
    struct tier *tier = cache->tier;
    bool briefly = tier->lent_sets[set];
    struct cache_block *victim = unlent_victim(cache, set, briefly);
    if (may_revoke || victim != NULL)
        tier->lent_sets[set] = victim == NULL;
    if (victim == NULL && may_revoke)
        victim = mapped_victim(cache, set);
    if (victim == NULL && briefly && may_revoke)
        victim = unlent_victim(cache, set, false);
    return victim;
}

int tier_take_line(struct cache *cache, uint64_t number, bool may_revoke, struct cache_block **slot)
{
    struct tier *tier = cache->tier;
    struct cache_block *victim = set_victim(cache, tier_set_of(tier, number), may_revoke);
    if (victim == NULL) {
        tier->lineless_misses += may_revoke;
        return -E_BUSY;
    }
    uint32_t line = line_of(cache, victim);
    if (victim->valid) {
        cache_hash_remove(cache, victim);
        cache->stats.evictions++;
        cache->stats.cached--;
    }
    if (tier->tags[line] != 0)
        store_tag(tier, line, 0, TIER_FREE); /* never a tag naming another block's bytes */
    tier_unbind_copy(cache, victim);
    if (victim->retired) {
        victim->retired = false;
        cache->stats.retired--;
    }
    victim->valid = false;
    victim->dirty = false;
    victim->on_disk = false;
    victim->stored_into = false;
    victim->busy = true;
    *slot = victim;
    return 0;
}

bool tier_pass_for_map(struct cache *cache, uint64_t lineless_before)
{
    if (cache->tier->lineless_misses == lineless_before || cache->stats.dirty == 0)
        return false;
    int error = tier_pass(cache); /* every dirty line, in block order: the journal's order kept */
    if (error != 0)
        printf("blk: tier: the pass for a map that found no line failed: %s\n", error_text(error));
    return error == 0;
}

void tier_filled(struct cache *cache, struct cache_block *const *slots, uint32_t count)
{
    struct tier *tier = cache->tier;
    for (uint32_t i = 0; i < count; i++) {
        nvm_note_write(slots[i]->data, CACHE_BLOCK_BYTES); /* the disk client's copy */
        nvm_flush(slots[i]->data, CACHE_BLOCK_BYTES);
    }
    nvm_fence(); /* every line's data durable before any tag names it */
    for (uint32_t i = 0; i < count; i++) {
        uint32_t line = line_of(cache, slots[i]);
        uint64_t tag = tier_tag(line, slots[i]->number, TIER_CLEAN);
        nvm_write(&tier->tags[line], &tag, sizeof tag);
        nvm_flush(&tier->tags[line], sizeof tag);
    }
    nvm_fence();
    tier->fills += count;
}

/* Write-through mode: the line's bytes to the disk now; its tag goes clean
 * at the next barrier, after DK_FLUSH. */
static int write_through(struct cache *cache, struct cache_block *block)
{
    const uint8_t *buffers[1] = {block->data};
    nvm_fence(); /* the line holds durably what the disk gets */
    int error = cache->disk.write(cache->disk.context, block->number, 1, buffers);
    if (error == 0)
        block->on_disk = true;
    return error;
}

int tier_write_in_place(struct cache *cache, struct cache_block *block, uint32_t offset,
                        const void *in, uint32_t length)
{
    struct tier *tier = cache->tier;
    if (!block->dirty) {
        store_tag(tier, line_of(cache, block), block->number, TIER_DIRTY);
        block->dirty = true;
        cache->stats.dirty++;
    }
    nvm_write(block->data + offset, in, length);
    nvm_flush(block->data + offset, length); /* durable at the next fence (a barrier's) */
    if (block->copy != 0)                    /* the lend copy shows what the line holds */
        memcpy(tier->pool.data[block->copy - 1] + offset, in, length);
    block->on_disk = false;
    return tier->write_through ? write_through(cache, block) : 0;
}

/* Part of a sequential stream longer than the lines a write could take
 * without a pass (never block 0: its fingerprint; never a short stream). */
static bool streams_past_tier(struct cache *cache, uint64_t number)
{
    struct tier *tier = cache->tier;
    tier->stream_length = number == tier->stream_next ? tier->stream_length + 1 : 1;
    tier->stream_next = number + 1;
    uint64_t takeable = cache->capacity - cache->stats.dirty;
    return number != 0 && tier->stream_length >= TIER_STREAM_MIN && tier->stream_length > takeable;
}

/* A write of a block the tier does not hold, to the disk only. */
static int bypass_write(struct cache *cache, uint64_t number, const void *in)
{
    const uint8_t *buffers[1] = {in};
    cache->tier->bypasses++;
    return cache->disk.write(cache->disk.context, number, 1, buffers);
}

int tier_write_new(struct cache *cache, uint64_t number, const void *in)
{
    struct tier *tier = cache->tier;
    if (streams_past_tier(cache, number))
        return bypass_write(cache, number, in);
    struct cache_block *block;
    int error = tier_take_line(cache, number, true, &block);
    if (error == -E_BUSY && (error = tier_pass(cache)) == 0)
        error = tier_take_line(cache, number, true, &block); /* the pass left clean lines */
    if (error == -E_BUSY && number != 0)
        return bypass_write(cache, number, in); /* every line's copy is lent: see below */
    if (error != 0)
        return error;
    uint32_t line = line_of(cache, block);
    nvm_write_persist(block->data, in, CACHE_BLOCK_BYTES);
    store_tag(tier, line, number, TIER_DIRTY);
    block->number = number;
    block->valid = true;
    block->dirty = true;
    block->busy = false;
    block->referenced = true;
    cache_hash_insert(cache, block);
    cache->stats.cached++;
    cache->stats.dirty++;
    return tier->write_through ? write_through(cache, block) : 0;
}

/* A patch of a block no line can take even after a pass (every clean line
 * of its set has its copy lent): read, patched and written to the disk
 * around the tier. The pass left nothing dirty, so the disk gets it after
 * every earlier write, as a power cut's order allows. */
int tier_patch_around(struct cache *cache, uint64_t number, uint32_t offset, const void *in,
                      uint32_t length)
{
    static uint8_t bytes[CACHE_BLOCK_BYTES]; /* not lent: any pool block may be */
    if (number == 0 || cache->stats.dirty > 0)
        return -E_BUSY;
    uint8_t *buffers[1] = {bytes};
    int error = cache->disk.read(cache->disk.context, number, 1, buffers);
    if (error != 0)
        return error;
    memcpy(bytes + offset, in, length);
    cache->tier->bypasses++;
    return cache->disk.write(cache->disk.context, number, 1, (const uint8_t *const *)buffers);
}

/* A pool block nobody borrows now, from the one after the last taken,
 * no longer any line's copy. */
static int free_pool_block(struct cache *cache)
{
    struct tier_pool *pool = &cache->tier->pool;
    for (uint32_t step = 0; step < pool->count; step++) {
        uint32_t index = (pool->next + step) % pool->count;
        if (pool->handle[index] == 0 || cache->memory.pinned == NULL ||
            !cache->memory.pinned(cache->memory.context, pool->handle[index])) {
            pool->next = (index + 1) % pool->count;
            if (pool->line[index] != 0)
                tier_unbind_copy(cache, &cache->blocks[pool->line[index] - 1]);
            return (int)index;
        }
    }
    return -1;
}

int tier_bypass_read(struct cache *cache, uint64_t number, struct cache_block **found)
{
    struct tier *tier = cache->tier;
    int index = free_pool_block(cache);
    if (index < 0)
        return -E_BUSY;
    uint8_t *buffers[1] = {tier->pool.data[index]};
    int error = cache->disk.read(cache->disk.context, number, 1, buffers);
    if (error != 0)
        return error;
    tier->bypasses++;
    tier->bypass = (struct cache_block){
        .number = number, .data = tier->pool.data[index], .handle = tier->pool.handle[index]};
    *found = &tier->bypass;
    return 0;
}

/* A bound line nobody borrows, from the recycling hand on (busy ones, held
 * for a lend being made, stay): its place in bound_lines, or -1. */
static int unlent_binding(struct cache *cache)
{
    struct tier *tier = cache->tier;
    for (uint32_t step = 0; step < tier->bound_count; step++) {
        uint32_t at = (tier->bound_hand + step) % tier->bound_count;
        struct cache_block *line = &cache->blocks[tier->bound_lines[at]];
        if (!line->busy && !cache_block_lent(cache, line))
            return (int)at;
    }
    return -1;
}

/* A bound line only mappings see, from the recycling hand on, its mappings
 * ended; the stores made through them are flushed (the line stays dirty,
 * they are durable at the next fence, as tier_flush_mapped_stores would
 * have them). Its place in bound_lines, or -1. */
static int mapped_binding(struct cache *cache)
{
    struct tier *tier = cache->tier;
    if (cache->memory.held_beyond_mappings == NULL || cache->memory.revoke == NULL)
        return -1;
    for (uint32_t step = 0; step < tier->bound_count; step++) {
        uint32_t at = (tier->bound_hand + step) % tier->bound_count;
        struct cache_block *line = &cache->blocks[tier->bound_lines[at]];
        if (line->busy || !mapped_clock_unmap(cache, line))
            continue;
        if (line->stored_into)
            nvm_flush(line->data, CACHE_BLOCK_BYTES);
        line->stored_into = false;
        return (int)at;
    }
    return -1;
}

/* A bound line unbound (its block ICA freed) for another to take its
 * place: one nobody borrows, else one only mappings see (theirs ended, so
 * the binding of a line lent into mappings is recycled as its line would
 * be); its place in bound_lines, or -1 when every bound line is held. */
static int recycle_binding(struct cache *cache)
{
    struct tier *tier = cache->tier;
    int at = unlent_binding(cache);
    if (at < 0)
        at = mapped_binding(cache);
    if (at < 0)
        return -1;
    struct cache_block *line = &cache->blocks[tier->bound_lines[at]];
    tier->bound_hand = ((uint32_t)at + 1) % tier->bound_count;
    cache->memory.unbind(cache->memory.context, line->handle);
    line->bound = false;
    line->handle = 0;
    return at;
}

/* Binds the line to a block ICA over its own page: its handle, or 0 when
 * none can be had (the caller copies). */
static uint64_t bind_line(struct cache *cache, struct cache_block *block)
{
    struct tier *tier = cache->tier;
    if (cache->memory.bind == NULL || block == &tier->bypass)
        return 0;
    int at = tier->bound_count < TIER_BOUND_MAX ? (int)tier->bound_count : recycle_binding(cache);
    if (at < 0)
        return 0;
    uint64_t handle;
    if (cache->memory.bind(cache->memory.context, block->data, &handle) != 0)
        return 0;
    if ((uint32_t)at == tier->bound_count)
        tier->bound_count++;
    tier->bound_lines[at] = line_of(cache, block);
    block->bound = true;
    block->handle = handle;
    tier->direct_binds++;
    return handle;
}

uint64_t tier_lend_handle(struct cache *cache, struct cache_block *block)
{
    struct tier_pool *pool = &cache->tier->pool;
    if (block->copy != 0 || block->bound)
        return block->handle;
    uint64_t bound = bind_line(cache, block);
    if (bound != 0)
        return bound;
    int index = block == &cache->tier->bypass ? -1 : free_pool_block(cache);
    if (index < 0 || pool->handle[index] == 0)
        return 0;
    cache->tier->lend_copies++;
    memcpy(pool->data[index], block->data, CACHE_BLOCK_BYTES);
    pool->line[index] = (uint32_t)(block - cache->blocks) + 1;
    block->copy = (uint16_t)(index + 1);
    block->handle = pool->handle[index];
    return block->handle;
}

int tier_barrier(struct cache *cache)
{
    struct tier *tier = cache->tier;
    tier_flush_mapped_stores(cache, false);
    nvm_fence(); /* every write acknowledged so far is durable in the NVDIMM, mapped stores too */
    tier->stream_length = 0;
    if (tier->write_through || cache->stats.dirty >= cache->capacity / 2) {
        int error = tier_pass(cache);
        if (error != 0)
            printf("blk: tier: the pass at a barrier failed: %s (its lines stay dirty)\n",
                   error_text(error));
        return tier->write_through ? error : 0;
    }
    return 0;
}

void tier_retire_lent_line(struct cache *cache, struct cache_block *block)
{
    if (!block->valid || block->busy)
        return;
    if (cache->memory.revoke != NULL)
        cache->memory.revoke(cache->memory.context, block->handle, false); /* mappings end */
    if (block->dirty) { /* its bytes may be the disk's only committed copy: the journal's */
        int error = tier_pass(cache);
        if (error != 0 || block->dirty) {
            printf("blk: tier: write-back before retiring block %lu failed: %s; it stays cached\n",
                   (unsigned long)block->number, error_text(error));
            return;
        }
    }
    store_tag(cache->tier, line_of(cache, block), 0, TIER_FREE);
    cache_hash_remove(cache, block);
    block->valid = false;
    block->retired = true;
    cache->stats.cached--;
    cache->stats.retired++;
}

int tier_lent_for_stores(struct cache *cache, struct cache_block *block)
{
    if (!block->bound)
        return -E_BUSY;
    if (!block->dirty) {
        store_tag(cache->tier, line_of(cache, block), block->number, TIER_DIRTY);
        block->dirty = true;
        cache->stats.dirty++;
    }
    block->on_disk = false;
    block->stored_into = true;
    return 0;
}

void tier_flush_mapped_stores(struct cache *cache, bool write_protect)
{
    struct tier *tier = cache->tier;
    for (uint32_t i = 0; i < tier->bound_count; i++) {
        struct cache_block *line = &cache->blocks[tier->bound_lines[i]];
        if (!line->stored_into)
            continue;
        if (write_protect && cache->memory.revoke != NULL) {
            cache->memory.revoke(cache->memory.context, line->handle, true);
            line->stored_into = false;
        }
        nvm_flush(line->data, CACHE_BLOCK_BYTES);
    }
}
