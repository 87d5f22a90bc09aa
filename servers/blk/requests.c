/* requests.c: BLK's request handling. Reads and writes copy whole blocks
 * between the cache and the data ICA that came with the request, except a
 * BLK_LEND read, which lends the cached blocks themselves (zero copy); the
 * ICA then goes back with the result to whoever is on top of its return
 * stack (the application itself for an FS_READBLOCK: direct return). Lends
 * are bounded per client and in all (cache_lends.c); past that BLK copies.
 * A shard refuses every block another shard owns (formica/blk_stripes.h):
 * a client's bug never makes two shards cache one block. The blocks FS
 * frees are retired (BLK_RETIRE): no lent page shows their next owner's
 * bytes, and an FS replica's read as of an older view is refused. With
 * the NVM tier every request goes through blk_dispatch (a line is lent as
 * its DRAM copy, a patch is the tier's) and 5 s without a request start a
 * write-back pass; a refused tier answers -E_CORRUPT. */
#include "requests.h"
#include "cache_lends.h"
#include "disk_client.h"
#include "retired_blocks.h"
#include "tier_attach.h"
#include <formica/data_ica.h>
#include <formica/errors.h>
#include <formica/file_region.h>
#include <formica/protocol/blk_dispatch.h>
#include <formica/refusal_log.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

#define LIST_CAPACITY (ICA_PAYLOAD_BYTES / sizeof(uint32_t))

static enum blk_durability durability = BLK_WRITE_THROUGH;
static struct journal_writer kept; /* BLK_KEPT's journal */

void blk_set_durability(enum blk_durability mode, struct journal *journal)
{
    durability = mode;
    if (journal != NULL)
        journal_start(&kept, journal);
}

static long refuse(const struct ica_control *page, const char *why)
{
    refusal_log("blk", page->sender_account, "blk: request %u from pid %u refused: %s\n",
                page->operation, page->sender, why);
    return -E_INVALID;
}

/* A block outside the disk or of another shard: refused, logged (apart:
 * the usual request's block is the shard's). */
static long refuse_block(const struct cache *cache, const struct ica_control *page, uint64_t block)
{
    if (block >= cache->disk.blocks)
        return refuse(page, "block outside the disk");
    refusal_log("blk", page->sender_account,
                "blk: request %u from pid %u refused: block %lu is shard %u's, not shard %u's\n",
                page->operation, page->sender, block, blk_shard_of(block, cache->shards),
                cache->shard);
    return -E_INVALID;
}

/* -E_INVALID (logged) unless `block` lies on the disk and in the shard. */
static inline long check_block(const struct cache *cache, const struct ica_control *page,
                               uint64_t block)
{
    if (!cache_owns(cache, block))
        return refuse_block(cache, page, block);
    return 0;
}

/* What BLK_READ and BLK_WRITE both ask: which blocks, and how (a read
 * with BLK_AS_OF: as of which view). */
struct transfer {
    uint64_t first_block;
    uint32_t blocks;
    uint32_t flags;
    uint64_t as_of, as_of_shard;
};

static struct retired_blocks retired;
static long this_shard; /* this process's pid, which a view names (BLK_AS_OF) */

static uint64_t block_at(const struct ica_control *page, const struct transfer *asked,
                         uint32_t index)
{
    if (asked->flags & BLK_BLOCK_LIST)
        return ((const uint32_t *)page->payload)[index];
    return asked->first_block + index;
}

static long check_transfer(const struct cache *cache, const struct ica_control *page,
                           const struct transfer *asked)
{
    uint64_t count = asked->blocks;
    if (count == 0 || count > STORAGE_MAX_BLOCKS)
        return refuse(page, "block count out of range");
    if ((asked->flags & BLK_BLOCK_LIST) && count > LIST_CAPACITY)
        return refuse(page, "block list larger than the payload");
    bool lend_only = page->operation == BLK_READ && (asked->flags & BLK_LEND) &&
                     page->data_count == 0 && count <= ICA_MAX_ATTACHED;
    if (!lend_only && !data_ica_holds(page, 0, count * STORAGE_BLOCK_BYTES))
        return refuse(page, "no data ICA, or one too small");
    for (uint32_t i = 0; i < count; i++) {
        long error = check_block(cache, page, block_at(page, asked, i));
        if (error != 0)
            return error;
    }
    return 0;
}

/* A read as of an FS replica's view (BLK_AS_OF): -E_STALE when the view
 * knew another process as this shard (it may have missed what a shard
 * that ended was told), or a block was retired after it. */
static long check_view(const struct ica_control *page, const struct transfer *asked)
{
    if (asked->as_of_shard != (uint64_t)this_shard)
        return -E_STALE;
    for (uint32_t i = 0; i < asked->blocks; i++)
        if (!retired_blocks_unchanged_since(&retired, block_at(page, asked, i), asked->as_of))
            return -E_STALE;
    return 0;
}

static struct cache_lends lends;

int blk_lends_init(uint32_t cache_capacity, uint32_t per_client,
                   bool (*still_lent)(void *context, uint64_t handle))
{
    return cache_lends_init(&lends, cache_capacity / 2, per_client, still_lent, NULL);
}

/* may_lend past a limit: the ended lends dropped and the limits asked
 * again; a refusal logged (apart: the usual lend is within the limits). */
static bool may_lend_after_drop(uint32_t client, uint32_t count)
{
    if (cache_lends_allow_after_drop(&lends, client, count)) {
        if (lends.refused_client == client)
            lends.refused_client = 0;
        return true;
    }
    if (lends.refused_client != client)
        printf("blk: pid %u has %u blocks lent (limit %u each, %u in all, %u lent now): "
               "copying instead of lending\n",
               client, cache_lends_of(&lends, client), lends.per_client, lends.total, lends.count);
    lends.refused_client = client;
    return false;
}

/* A client at its limit (or all lends at theirs) gets copies, logged once
 * until it may borrow again. */
static inline bool may_lend(const struct ica_control *page, uint32_t count)
{
    uint32_t client = page->origin;
    if (!cache_lends_within_limits(&lends, client, count))
        return may_lend_after_drop(client, count);
    if (lends.refused_client == client)
        lends.refused_client = 0;
    return true;
}

/* A block (a DRAM slot or a tier's line) found for a lend not made yet is
 * busy (no victim) until the lend's last block is found: the misses after
 * it must not evict it (nobody sees it lent before the answer goes; a
 * line taken again would be lent twice in one answer). */
static void hold_for_lend(struct cache *cache, uint64_t number, struct cache_block **held,
                          uint32_t *count)
{
    struct cache_block *block = cache_lookup(cache, number);
    if (block != NULL && !block->busy) {
        block->busy = true;
        held[(*count)++] = block;
    }
}

static void release_held(struct cache_block **held, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        held[i]->busy = false;
}

/* The handles of `asked`'s blocks (read in when missing), each held until
 * the last is found; 1, 0 for a heap block (copy them all), or an error. */
static long find_lend_handles(struct cache *cache, const struct ica_control *page,
                              const struct transfer *asked, uint64_t *handles)
{
    struct cache_block *held[ICA_MAX_ATTACHED];
    uint32_t holding = 0;
    long found = 1;
    for (uint32_t i = 0; i < asked->blocks && found == 1; i++) {
        uint64_t number = block_at(page, asked, i);
        int error = cache_lend(cache, number, &handles[i]);
        if (error != 0)
            found = error;
        else if (handles[i] == 0)
            found = 0;
        else if (i + 1 < asked->blocks)
            hold_for_lend(cache, number, held, &holding);
    }
    release_held(held, holding);
    return found;
}

/* Lends every block read, or none (then the caller copies): 1 if lent. */
static long lend_blocks(struct cache *cache, uint64_t control, struct ica_control *page,
                        const struct transfer *asked)
{
    uint32_t count = asked->blocks;
    uint64_t handles[ICA_MAX_ATTACHED];
    if (count > ICA_MAX_ATTACHED || !may_lend(page, count))
        return 0;
    long found = find_lend_handles(cache, page, asked, handles);
    if (found != 1)
        return found;
    for (uint32_t i = 0; i < count; i++)
        page->lent[i] = handles[i];
    page->lent_count = count;
    cache_lends_record(&lends, control, page->origin, handles, count);
    return 1;
}

long blk_map(struct cache *cache, uint64_t control, struct blk_map_message *message)
{
    struct ica_control *page = ica_control_of(control);
    struct transfer asked = {message->first_block, message->blocks, message->flags, 0, 0};
    bool stores = (asked.flags & BLK_MAP_WRITABLE) != 0;
    message->writable = 0;
    if (asked.blocks == 0 || asked.blocks > ICA_MAX_ATTACHED ||
        (asked.flags & ~(BLK_BLOCK_LIST | BLK_MAP_WRITABLE)) || (stores && asked.blocks != 1))
        return refuse(page, "map of no blocks, too many, or unknown flags");
    if (stores && cache->tier != NULL && cache->tier->write_through)
        return refuse(page, "a writable map of a write-through tier's line (stores would reach "
                            "the disk only at a pass)");
    for (uint32_t i = 0; i < asked.blocks; i++) {
        long error = check_block(cache, page, block_at(page, &asked, i));
        if (error != 0)
            return error;
    }
    page->lent_count = 0;
    if (stores && cache->tier != NULL) {
        int error = cache_fill_for_stores(cache, asked.first_block);
        if (error != 0)
            return error;
    }
    long lent = lend_blocks(cache, control, page, &asked);
    if (lent < 0)
        return lent;
    if (lent != 1)
        return -E_BUSY; /* at a lend limit: asked again */
    if (stores) {
        int error = cache_lent_for_stores(cache, asked.first_block);
        if (error != 0)
            return error;
        message->writable = 1;
    }
    return (long)asked.blocks;
}

/* The blocks of a write, to the disk before the answer (write-through). */
static int write_all_through(struct cache *cache, const struct ica_control *page,
                             const struct transfer *asked)
{
    for (uint32_t i = 0; i < asked->blocks; i++) {
        int error = cache_write_through(cache, block_at(page, asked, i));
        if (error != 0)
            return error;
    }
    return 0;
}

static long transfer(struct cache *cache, uint64_t control, const struct transfer *asked,
                     bool write)
{
    struct ica_control *page = ica_control_of(control);
    long error = check_transfer(cache, page, asked);
    if (error == 0 && !write && (asked->flags & BLK_AS_OF))
        error = check_view(page, asked);
    if (error != 0)
        return error;
    page->lent_count = 0;
    if (!write && (asked->flags & BLK_LEND)) {
        error = lend_blocks(cache, control, page, asked);
        if (error < 0)
            return error;
        if (error == 1)
            return (long)(asked->blocks * STORAGE_BLOCK_BYTES);
        if (page->data_count == 0)
            return -E_NEEDS_DATA; /* the blocks must be copied, and nothing came to copy into */
    }
    uint8_t *data = ica_address(page->data[0]);
    for (uint32_t i = 0; i < asked->blocks; i++) {
        uint8_t *slice = data + (size_t)i * STORAGE_BLOCK_BYTES;
        uint64_t block = block_at(page, asked, i);
        error = write ? cache_write(cache, block, slice) : cache_read(cache, block, slice);
        if (error == 0 && write && durability == BLK_KEPT)
            error = journal_record(&kept, cache, block, slice);
        if (error == 0 && write && durability == BLK_WRITE_THROUGH && i + 1 == asked->blocks)
            error = write_all_through(cache, page, asked);
        if (error != 0) {
            printf("blk: %s of block %lu failed: %s\n", write ? "write" : "read", block,
                   error_text(error));
            return error;
        }
    }
    return (long)(asked->blocks * STORAGE_BLOCK_BYTES);
}

/* BLK_PATCH's steps: the payload's bytes into one cached block (a small
 * write). Inline: the serve loop's usual request after a read. */
static inline long patch_block(struct cache *cache, const struct ica_control *page,
                               const struct blk_patch_message *message)
{
    uint64_t block = message->block;
    uint32_t offset = message->offset, length = message->length;
    long refused = check_block(cache, page, block);
    if (refused != 0)
        return refused;
    if (length == 0 || length > FS_INLINE_WRITE_BYTES || !cache_range_fits(offset, length))
        return refuse(page, "patch outside the block or too long");
    int error = cache_patch(cache, block, offset, page->payload, length);
    if (error == 0 && durability == BLK_KEPT) /* only the patch: replayed over its block */
        error = journal_record_patch(&kept, cache, block, offset, page->payload, length);
    else if (error == 0 && durability == BLK_WRITE_THROUGH)
        error = cache_write_through(cache, block);
    if (error != 0) {
        printf("blk: patch of block %lu failed: %s\n", block, error_text(error));
        return error;
    }
    return (long)length;
}

/* patch_block in a tier's line: no kept journal (the NVM holds the write),
 * no write-through of BLK's own (the tier has its mode). Apart, so the
 * usual small write of a DRAM cache keeps its one copy of the steps. */
static __attribute__((noinline)) long patch_line(struct cache *cache,
                                                 const struct ica_control *page,
                                                 const struct blk_patch_message *message)
{
    long refused = check_block(cache, page, message->block);
    if (refused != 0)
        return refused;
    if (message->length == 0 || message->length > FS_INLINE_WRITE_BYTES ||
        !cache_range_fits(message->offset, message->length))
        return refuse(page, "patch outside the block or too long");
    int error =
        cache_patch_any(cache, message->block, message->offset, page->payload, message->length);
    if (error != 0) {
        printf("blk: patch of block %lu failed: %s\n", message->block, error_text(error));
        return error;
    }
    return (long)message->length;
}

long blk_patch(struct cache *cache, uint64_t control, struct blk_patch_message *message)
{
    if (cache->tier != NULL)
        return patch_line(cache, ica_control_of(control), message);
    return patch_block(cache, ica_control_of(control), message);
}

/* A lend of the one block `handle` with the answer (0: a heap block, which
 * must be copied instead). */
static inline long lend_one_handle(uint64_t control, struct ica_control *page, uint64_t handle)
{
    if (handle == 0)
        return -E_NEEDS_DATA;
    page->lent[0] = handle;
    page->lent_count = 1;
    cache_lends_record(&lends, control, page->origin, &handle, 1);
    return (long)STORAGE_BLOCK_BYTES;
}

/* lend_one of a block not cached: read in first (apart, so a cached block's
 * lend needs no spills). */
static long lend_one_missing(struct cache *cache, uint64_t control, struct ica_control *page,
                             uint64_t block)
{
    uint64_t handle;
    int error = cache_lend_missing(cache, block, &handle);
    if (error != 0)
        return error;
    return lend_one_handle(control, page, handle);
}

/* FS_READBLOCK's usual BLK_READ: one block, lent, nothing to copy into:
 * transfer()'s checks and outcomes for that case (lend_blocks' for one
 * block), without its loops. */
static inline long lend_one(struct cache *cache, uint64_t control, struct ica_control *page,
                            uint64_t block)
{
    long refused = check_block(cache, page, block);
    if (refused != 0)
        return refused;
    page->lent_count = 0;
    if (!may_lend(page, 1))
        return -E_NEEDS_DATA; /* not lent: it must be copied */
    struct cache_block *cached = cache_use_cached(cache, block);
    if (cached == NULL)
        return lend_one_missing(cache, control, page, block);
    return lend_one_handle(control, page, cached->handle);
}

/* Any other BLK_READ (apart, so lend_one saves no registers). */
static long read_in_general(struct cache *cache, uint64_t control,
                            const struct blk_read_message *message)
{
    struct transfer asked = {message->first_block, message->blocks, message->flags, message->as_of,
                             message->as_of_shard};
    return transfer(cache, control, &asked, false);
}

/* blk_read's steps: each block lent when it is cached and may be lent,
 * else the general read. */
static inline long read_blocks(struct cache *cache, uint64_t control, struct ica_control *page,
                               struct blk_read_message *message)
{
    if (message->blocks == 1 && message->flags == BLK_LEND && page->data_count == 0)
        return lend_one(cache, control, page, message->first_block);
    return read_in_general(cache, control, message);
}

long blk_read(struct cache *cache, uint64_t control, struct blk_read_message *message)
{
    if (cache->tier != NULL) /* a line is lent as its copy: lend_blocks, cache_lend */
        return read_in_general(cache, control, message);
    return read_blocks(cache, control, ica_control_of(control), message);
}

long blk_write(struct cache *cache, uint64_t control, struct blk_write_message *message)
{
    struct transfer asked = {message->first_block, message->blocks,
                             message->flags & ~(BLK_LEND | BLK_AS_OF), 0, 0};
    return transfer(cache, control, &asked, true);
}

long blk_retire(struct cache *cache, uint64_t control, struct blk_retire_message *message)
{
    const struct ica_control *page = ica_control_of(control);
    const uint32_t *blocks = (const uint32_t *)page->payload;
    if (message->blocks > LIST_CAPACITY || (message->flags & ~(BLK_RETIRE_ALL | BLK_RETIRE_SEAL)))
        return refuse(page, "retire of more blocks than the payload holds, or unknown flags");
    for (uint32_t i = 0; i < message->blocks; i++) {
        long refused = check_block(cache, page, blocks[i]);
        if (refused != 0)
            return refused;
    }
    if (message->flags & BLK_RETIRE_ALL) {
        cache_retire_lent(cache);
        retired_blocks_note_all(&retired, message->sequence);
    }
    for (uint32_t i = 0; i < message->blocks; i++) {
        cache_retire(cache, blocks[i]);
        retired_blocks_note(&retired, blocks[i], message->sequence);
    }
    if (message->flags & BLK_RETIRE_SEAL)
        retired_blocks_seal(&retired, message->sequence);
    return 0;
}

long blk_stats(struct cache *cache, uint64_t control, struct blk_stats_message *message)
{
    (void)control;
    struct cache_stats stats;
    cache_get_stats(cache, &stats);
    message->hits = stats.hits;
    message->misses = stats.misses;
    message->dirty = stats.dirty;
    message->cached = stats.cached;
    message->capacity = stats.capacity;
    message->read_ahead = stats.read_ahead;
    message->written_back = stats.written_back;
    message->evictions = stats.evictions;
    return 0;
}

long blk_lent(struct cache *cache, uint64_t control, struct blk_lent_message *message)
{
    (void)control;
    message->blocks = cache_count_lent(cache);
    return 0;
}

long blk_info(struct cache *cache, uint64_t control, struct blk_info_message *message)
{
    (void)cache, (void)control;
    message->bytes = disk_client_bytes();
    return 0;
}

long blk_sync(struct cache *cache, uint64_t control, struct blk_sync_message *message)
{
    (void)control, (void)message;
    if (cache->tier != NULL)
        return tier_barrier(cache); /* a fence: the NVM holds every write */
    int error = cache_sync(cache);  /* writes back, then DK_FLUSH (the barrier) */
    if (error != 0)
        printf("blk: sync failed: %s\n", error_text(error));
    else if (durability == BLK_KEPT)
        journal_clear(&kept); /* all of it is on the disk now */
    return error;
}

long blk_tier_report(struct cache *cache, uint64_t control, struct blk_tier_report_message *message)
{
    (void)message;
    struct ica_control *page = ica_control_of(control);
    _Static_assert(sizeof(struct blk_tier_report) <= ICA_PAYLOAD_BYTES, "the report fits");
    tier_report(blk_tier(), cache, (struct blk_tier_report *)page->payload);
    return 0;
}

static int (*dram_cache)(struct cache *cache);

void blk_set_dram_cache(int (*make)(struct cache *cache))
{
    dram_cache = make;
}

/* `tier format`: a refused tier's lines dropped, an attached one's written
 * back first. */
static long format_tier(struct cache *cache)
{
    struct tier *tier = blk_tier();
    if (tier == NULL || cache->tier != tier)
        return -E_NOT_FOUND;
    if (tier->state == BLK_TIER_ATTACHED) {
        int error = tier_pass(cache);
        if (error != 0)
            return error;
    }
    printf("blk: tier formatted for this disk: %s\n",
           tier->state == BLK_TIER_REFUSED ? "the refused tier's lines dropped"
                                           : "every line written back, then dropped");
    return tier_format(tier, cache);
}

long blk_tier_control(struct cache *cache, uint64_t control,
                      struct blk_tier_control_message *message)
{
    (void)control;
    if (cache->tier == NULL)
        return -E_NOT_FOUND;
    if (message->action == BLK_TIER_FORMAT)
        return format_tier(cache);
    if (cache->tier->state != BLK_TIER_ATTACHED)
        return -E_CORRUPT;
    if (message->action == BLK_TIER_FLUSH) {
        int error = tier_pass(cache);
        blk_tier_dump_order();
        return error;
    }
    if (message->action == BLK_TIER_DETACH)
        return blk_tier_detach(cache, dram_cache);
    return -E_INVALID;
}

/* Any request but a usual read or a patch (apart, so those save no
 * registers). */
static long answer_any(struct cache *cache, uint64_t control)
{
    return blk_dispatch(cache, control);
}

/* Performs the request in the control ICA and sets its result; the caller
 * returns it. Inline: the serve loop's one step. */
static inline void answer(struct cache *cache, uint64_t control)
{
    cache_lends_returned(&lends, control); /* its holder passed it on: its lends ended */
    struct ica_control *page = ica_control_of(control);
    if (page->operation == BLK_READ && blk_check(page) == 0) /* blk_dispatch's check */
        page->result = read_blocks(cache, control, page, blk_read_of(page));
    else if (page->operation == BLK_PATCH && blk_check(page) == 0)
        page->result = patch_block(cache, page, blk_patch_of(page));
    else
        page->result = answer_any(cache, control);
}

/* A failed receive ends BLK. */
static _Noreturn void receive_failed(long error)
{
    printf("blk: receive failed: %s\n", error_text(error));
    exit(1);
}

/* After a failed return (reported), the next request through a plain
 * receive (apart: the loop's usual turn is one system call). */
static uint64_t receive_after_failed_return(long error)
{
    printf("blk: return failed: %s\n", error_text(error));
    long control = ica_receive(0);
    if (control < 0)
        receive_failed(control);
    return (uint64_t)control;
}

/* A refused tier: every request -E_CORRUPT but the tier's own (the report,
 * `tier format`), until a format attaches it: then the format's control,
 * answered, not yet returned. */
static uint64_t serve_refused(struct cache *cache, uint64_t control)
{
    for (;;) {
        struct ica_control *page = ica_control_of(control);
        bool tier_request = page->operation == BLK_TIER_REPORT ||
                            page->operation == BLK_TIER_CONTROL || page->operation == BLK_STATS ||
                            page->operation == BLK_INFO;
        page->result = tier_request ? answer_any(cache, control) : -E_CORRUPT;
        if (cache->tier->state == BLK_TIER_ATTACHED)
            return control; /* formatted: answered, the caller returns it */
        long next = ica_return_receive(control, 0, 0);
        control = next >= 0 ? (uint64_t)next : receive_after_failed_return(next);
    }
}

/* The tier's serve loop: BLK's, with a write-back pass after TIER_IDLE_MS
 * without a request while lines are dirty. */
static _Noreturn void serve_tier(struct cache *cache, uint64_t control)
{
    for (;;) {
        if (cache->tier != NULL && cache->tier->state == BLK_TIER_REFUSED) {
            control = serve_refused(cache, control);
            long next = ica_return_receive(control, 0, 0);
            control = next >= 0 ? (uint64_t)next : receive_after_failed_return(next);
            continue;
        }
        cache_lends_returned(&lends, control);
        ica_control_of(control)->result =
            answer_any(cache, control); /* blk_read, blk_patch: a tier's */
        bool idle_pass = cache->tier != NULL && cache->stats.dirty > 0;
        long next =
            ica_return_receive(control, idle_pass ? ICA_TIMEOUT : 0, idle_pass ? TIER_IDLE_MS : 0);
        while (next == -E_NOT_FOUND && idle_pass && !ica_held(control)) {
            int error = tier_pass(cache); /* idle: nothing is in flight */
            if (error != 0)
                printf("blk: tier: the idle pass failed: %s\n", error_text(error));
            next = ica_receive(0);
        }
        control = next >= 0 ? (uint64_t)next : receive_after_failed_return(next);
    }
}

_Noreturn void blk_serve(struct cache *cache)
{
    this_shard = process_id();
    long first = ica_receive(0);
    if (first < 0)
        receive_failed(first);
    uint64_t control = (uint64_t)first;
    if (cache->tier != NULL) /* the tier's (an NVDIMM too small leaves BLK a DRAM cache) */
        serve_tier(cache, control);
    for (;;) {
        answer(cache, control);
        long next = ica_return_receive(control, 0, 0);
        control = next >= 0 ? (uint64_t)next : receive_after_failed_return(next);
    }
}
