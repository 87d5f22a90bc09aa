/* tier_attach.c: BLK's start-up with --nvm-tier: the NVDIMM whose role the
 * boot option nvm=... names "tier" (lib/nfit.c), mapped write-back,
 * prepared and mounted as the cache (tier.h), its pool of DRAM block ICAs
 * for lends; and `tier detach`, after which BLK caches in DRAM again. The
 * tier serves one BLK shard for now: with more shards BLK caches in DRAM. */
#include "tier_attach.h"
#include "disk_client.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/ica.h>
#include <formica/nvm_order_record.h>
#include <formica/nvm_persist.h>
#include <formica/nvm_role.h>
#include <formica/protocol/syscalls.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct tier tier;
static struct tier *attached; /* &tier once there is one */

struct tier *blk_tier(void)
{
    return attached;
}

static uint32_t sets_asked(void)
{
    char value[16];
    if (kernel_option("blk_tier_sets", value, sizeof value) <= 0)
        return TIER_DEFAULT_SETS;
    uint32_t sets = (uint32_t)strtoul(value, NULL, 0);
    return sets > 0 && sets <= 4096 ? sets : TIER_DEFAULT_SETS;
}

static bool write_through_asked(void)
{
    char value[16] = "";
    kernel_option("blk_tier", value, sizeof value);
    return strcmp(value, "write-through") == 0;
}

static uint64_t tier_physical; /* where the mapped NVDIMM (tier.base) lies */

/* A line lent itself: a block ICA over its page (SYS_ICA_DEVICE_BLOCK). */
static int bind_line(void *context, uint8_t *data, uint64_t *handle)
{
    (void)context;
    long id = device_block_ica(tier_physical + (uint64_t)(data - tier.base));
    if (id < 0) {
        printf("blk: tier: a line cannot be lent itself: %s; it is lent as a copy\n",
               error_text(id));
        return (int)id;
    }
    *handle = (uint64_t)id;
    return 0;
}

static void unbind_line(void *context, uint64_t handle)
{
    (void)context;
    long error = ica_free(handle);
    if (error != 0)
        printf("blk: tier: freeing a line's block ICA failed: %s\n", error_text(error));
}

/* The pool of DRAM block ICAs a line's bytes are copied into to be lent. */
static void fill_pool(const struct cache_memory *memory)
{
    for (uint32_t i = 0; i < TIER_LEND_POOL; i++) {
        uint8_t *data;
        uint64_t handle;
        if (memory->allocate(memory->context, &data, &handle) != 0)
            break;
        tier_pool_add(&tier, data, handle);
    }
}

static void report_mount(uint64_t physical, const struct cache *cache)
{
    if (tier.state == BLK_TIER_REFUSED) {
        printf("blk: tier refused: %s; nothing written to the NVDIMM or the disk, every request "
               "answered -E_CORRUPT (boot without --nvm-tier, or `tier format`)\n",
               tier.refusal);
        return;
    }
    printf("blk: tier: NVDIMM at 0x%lx, %lu MiB: %u sets of %u lines (%lu MiB), %s; %u lines "
           "cached, %u dirty; made durable with %s and sfence\n",
           physical, tier.bytes >> 20, tier.sets, tier.ways,
           ((uint64_t)tier.lines_count * CACHE_BLOCK_BYTES) >> 20,
           tier.write_through ? "write-through" : "write-back", cache->stats.cached,
           cache->stats.dirty, nvm_flush_kind_name(nvm_flush_kind_in_use()));
}

int blk_tier_attach(struct cache *cache, const struct cache_disk *disk, uint32_t shards,
                    const struct cache_memory *memory)
{
    uint64_t physical, bytes;
    uint8_t *base;
    if (nvm_range_of_role("tier", "blk: tier", &physical, &bytes) != 0)
        return 0;
    if (shards > 1) {
        attached = &tier;
        snprintf(tier.refusal, sizeof tier.refusal,
                 "not used: BLK runs as %u shards, the tier serves one shard for now", shards);
        printf("blk: tier: %s: caching in DRAM\n", tier.refusal);
        return 0;
    }
    long error = device_map_whole(physical, bytes, &base);
    if (error != 0) {
        printf("blk: tier: cannot map the NVDIMM at 0x%lx: %s\n", physical, error_text(error));
        return 0;
    }
    attached = &tier;
    error = tier_prepare(&tier, base, bytes, sets_asked(), shards, disk, disk_client_serial());
    if (error != 0) {
        printf("blk: tier refused: %s; caching in DRAM\n",
               error == -E_NO_SPACE ? tier.refusal : error_text(error));
        return 0;
    }
    tier.write_through = write_through_asked();
    if (nvm_record_open(base, bytes))
        printf("blk: tier: recording the order of its NVM stores (nvm_record); dumped at `tier "
               "flush`\n");
    fill_pool(memory);
    if ((error = cache_init_tier(cache, &tier, disk)) != 0)
        return (int)error;
    cache->memory = *memory;
    tier_physical = physical;
    cache->memory.bind = bind_line;
    cache->memory.unbind = unbind_line;
    tier_mount(&tier, cache);
    report_mount(physical, cache);
    return 1;
}

void blk_tier_dump_order(void)
{
    if (!nvm_recording())
        return;
    printf("@json {\"kind\":\"nvm_layout\",\"who\":\"tier\",\"tags_offset\":%lu,"
           "\"lines_offset\":%lu,\"lines\":%u,\"line_bytes\":%u}\n",
           (uint64_t)((uint8_t *)tier.tags - tier.base), (uint64_t)(tier.lines - tier.base),
           tier.lines_count, CACHE_BLOCK_BYTES);
    nvm_record_dump("tier");
}

int blk_tier_detach(struct cache *cache, int (*dram_cache)(struct cache *cache))
{
    if (cache->tier == NULL)
        return -E_NOT_FOUND;
    int error = tier_pass(cache);
    if (error != 0)
        return error;
    tier_write_header(&tier, TIER_FLAG_DETACHED);
    tier.state = BLK_TIER_DETACHED;
    cache_release(cache);
    error = dram_cache(cache);
    printf("blk: tier detached: every line written back, the header says detached; caching in "
           "DRAM%s\n",
           error == 0 ? "" : " failed");
    return error;
}
