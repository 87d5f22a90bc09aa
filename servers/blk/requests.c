/* requests.c: BLK's request handling. Reads and writes copy whole blocks
 * between the cache and the data ICA that came with the request, except a
 * BLK_LEND read, which lends the cached blocks themselves (zero copy); the
 * ICA then goes back with the result to whoever is on top of its return
 * stack (the application itself for an FS_READBLOCK: direct return). */
#include "requests.h"
#include <formica/data_ica.h>
#include <formica/errors.h>
#include <formica/storage.h>
#include <stdio.h>

#define LIST_CAPACITY (ICA_PAYLOAD_BYTES / sizeof(uint32_t))

static long refuse(const struct ica_control *page, const char *why)
{
    printf("blk: request %u from pid %u refused: %s\n", page->operation, page->sender, why);
    return -E_INVALID;
}

static uint64_t block_at(const struct ica_control *page, uint32_t index)
{
    if (page->argument[2] & BLK_BLOCK_LIST)
        return ((const uint32_t *)page->payload)[index];
    return page->argument[0] + index;
}

static long check_transfer(const struct cache *cache, const struct ica_control *page)
{
    uint64_t count = page->argument[1];
    if (count == 0 || count > STORAGE_MAX_BLOCKS)
        return refuse(page, "block count out of range");
    if ((page->argument[2] & BLK_BLOCK_LIST) && count > LIST_CAPACITY)
        return refuse(page, "block list larger than the payload");
    bool lend_only = page->operation == BLK_READ && (page->argument[2] & BLK_LEND) &&
                     page->data_count == 0 && count <= ICA_MAX_ATTACHED;
    if (!lend_only && !data_ica_holds(page, 0, count * STORAGE_BLOCK_BYTES))
        return refuse(page, "no data ICA, or one too small");
    for (uint32_t i = 0; i < count; i++)
        if (block_at(page, i) >= cache->disk.blocks)
            return refuse(page, "block outside the disk");
    return 0;
}

/* Lends every block read, or none (then the caller copies): 1 if lent. */
static long lend_blocks(struct cache *cache, struct ica_control *page)
{
    uint32_t count = (uint32_t)page->argument[1];
    uint64_t handles[ICA_MAX_ATTACHED];
    if (count > ICA_MAX_ATTACHED)
        return 0;
    for (uint32_t i = 0; i < count; i++) {
        int error = cache_lend(cache, block_at(page, i), &handles[i]);
        if (error != 0)
            return error;
        if (handles[i] == 0)
            return 0; /* a heap block: copy them all instead */
    }
    for (uint32_t i = 0; i < count; i++)
        page->lent[i] = handles[i];
    page->lent_count = count;
    return 1;
}

static long transfer(struct cache *cache, struct ica_control *page, bool write)
{
    long error = check_transfer(cache, page);
    if (error != 0)
        return error;
    page->lent_count = 0;
    if (!write && (page->argument[2] & BLK_LEND)) {
        error = lend_blocks(cache, page);
        if (error < 0)
            return error;
        if (error == 1)
            return (long)(page->argument[1] * STORAGE_BLOCK_BYTES);
        if (page->data_count == 0)
            return -E_NEEDS_DATA; /* the blocks must be copied, and nothing came to copy into */
    }
    uint8_t *data = ica_address(page->data[0]);
    for (uint32_t i = 0; i < page->argument[1]; i++) {
        uint8_t *slice = data + (size_t)i * STORAGE_BLOCK_BYTES;
        error = write ? cache_write(cache, block_at(page, i), slice)
                      : cache_read(cache, block_at(page, i), slice);
        if (error != 0) {
            printf("blk: %s of block %lu failed: %s\n", write ? "write" : "read", block_at(page, i),
                   error_text(error));
            return error;
        }
    }
    return (long)(page->argument[1] * STORAGE_BLOCK_BYTES);
}

/* BLK_PATCH: the payload's bytes into one cached block (a small write). */
static long patch(struct cache *cache, const struct ica_control *page)
{
    uint64_t block = page->argument[0], offset = page->argument[1], length = page->argument[2];
    if (block >= cache->disk.blocks)
        return refuse(page, "block outside the disk");
    if (length == 0 || length > FS_INLINE_WRITE_BYTES || offset + length > STORAGE_BLOCK_BYTES)
        return refuse(page, "patch outside the block or too long");
    int error = cache_patch(cache, block, (uint32_t)offset, page->payload, (uint32_t)length);
    if (error != 0) {
        printf("blk: patch of block %lu failed: %s\n", block, error_text(error));
        return error;
    }
    return (long)length;
}

static long report_stats(const struct cache *cache, struct ica_control *page)
{
    struct cache_stats stats;
    cache_get_stats(cache, &stats);
    page->argument[0] = stats.hits;
    page->argument[1] = stats.misses;
    page->argument[2] = stats.dirty;
    page->argument[3] = stats.cached;
    page->argument[4] = stats.capacity;
    page->argument[5] = stats.read_ahead;
    page->argument[6] = stats.written_back;
    page->argument[7] = stats.evictions;
    return 0;
}

static long sync_all(struct cache *cache)
{
    int error = cache_sync(cache);
    if (error != 0)
        printf("blk: sync failed: %s\n", error_text(error));
    return error;
}

void blk_answer(struct cache *cache, struct ica_control *page)
{
    switch (page->operation) {
    case BLK_READ:
        page->result = transfer(cache, page, false);
        break;
    case BLK_WRITE:
        page->result = transfer(cache, page, true);
        break;
    case BLK_SYNC:
        page->result = sync_all(cache);
        break;
    case BLK_STATS:
        page->result = report_stats(cache, page);
        break;
    case BLK_PATCH:
        page->result = patch(cache, page);
        break;
    default:
        page->result = refuse(page, "unknown operation");
    }
}
