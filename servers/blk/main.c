/* servers/blk/main.c: BLK, the file cache server (program "blk"). `blk
 * [--cache-kib N] [--lend-limit N] [--instance S/N]` caches N KiB of disk
 * blocks (default the kernel option blk_cache_kib, else 8 MiB) and lends at most N blocks to one
 * client at a time (default 64, or the kernel option blk_lend_limit; half the cache in all); it
 * answers requests one at a time and asks DK on a miss. As shard S of N (init's --instance) it
 * caches only the blocks of shard S (formica/blk_stripes.h) in 1/N of the cache, with its own kept
 * journal. When the boot option nvm=... names a tier (build/run --nvm-tier), the cache is the NVM
 * tier instead (tier_attach.c, docs/storage.md "The NVM tier"): its lines hold every acknowledged
 * write, so no kept journal. */
#include "cache.h"
#include "cache_lends.h"
#include "disk_client.h"
#include "requests.h"
#include "tier_attach.h"
#include <formica/instance.h>
#include <formica/kept_region.h>
#include <formica/request.h>
#include <formica/server_placeholder.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CACHE_KIB (8u * 1024)

static struct cache cache;
static struct {
    uint32_t capacity;
    struct cache_disk disk;
    struct server_instance shard;
    enum blk_durability durability;
} dram; /* the DRAM cache BLK has, or takes after `tier detach` */

/* Each cached block lives in its own block ICA, so BLK can lend it. */
static int block_ica(void *context, uint8_t **data, uint64_t *handle)
{
    (void)context;
    long id = ica_allocate(ICA_KIND_BLOCK, STORAGE_BLOCK_BYTES);
    if (id < 0)
        return (int)id;
    *data = ica_address((uint64_t)id);
    *handle = (uint64_t)id;
    return 0;
}

/* A block lent to a requester that has not passed its control ICA on yet. */
static bool block_lent(void *context, uint64_t handle)
{
    (void)context;
    return ica_lend_count(handle) > 0;
}

/* A block some holder sees through a lend other than a mapping lend (a
 * request's, FS's borrowing): mapping lends alone do not pin it, CLOCK
 * revokes them to evict it (cache_clock.c). An error counts as held. */
static bool block_held_beyond_mappings(void *context, uint64_t handle)
{
    (void)context;
    return ica_lend_count_but_mappings(handle) != 0;
}

/* The shard's part of the cache: the size asked for (`--cache-kib N`, else the kernel
 * option blk_cache_kib=N, else 8 MiB) divided by the shards. */
static uint32_t capacity_from(int argc, char **argv, uint32_t shards)
{
    uint64_t kib = DEFAULT_CACHE_KIB;
    char value[16];
    if (kernel_option("blk_cache_kib", value, sizeof value) > 0)
        kib = strtoul(value, NULL, 0);
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--cache-kib") == 0)
            kib = strtoul(argv[i + 1], NULL, 0);
    uint64_t blocks = kib * 1024 / STORAGE_BLOCK_BYTES / shards;
    return blocks < 2 * CACHE_MAX_RUN ? 2 * CACHE_MAX_RUN : (uint32_t)blocks;
}

/* `--lend-limit N`, else the kernel option blk_lend_limit=N (init starts
 * BLK without arguments: `build/run --append blk_lend_limit=N`). */
static uint32_t lend_limit_from(int argc, char **argv)
{
    uint32_t limit = CACHE_LENDS_PER_CLIENT;
    char value[16];
    if (kernel_option("blk_lend_limit", value, sizeof value) > 0)
        limit = (uint32_t)strtoul(value, NULL, 0);
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--lend-limit") == 0)
            limit = (uint32_t)strtoul(argv[i + 1], NULL, 0);
    return limit;
}

/* `--write-through` / `--write-back`, or blk=write-through / blk=write-back
 * on the kernel command line; else the kept journal (requests.h). */
static enum blk_durability durability_asked(int argc, char **argv)
{
    char value[16] = "";
    kernel_option("blk", value, sizeof(value));
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--write-", 8) == 0)
            strncpy(value, argv[i] + 2, sizeof(value) - 1);
    if (strcmp(value, "write-through") == 0)
        return BLK_WRITE_THROUGH;
    return strcmp(value, "write-back") == 0 ? BLK_WRITE_BACK : BLK_KEPT;
}

static const char *const durability_names[] = {
    [BLK_KEPT] = "kept journal",
    [BLK_WRITE_THROUGH] = "write-through",
    [BLK_WRITE_BACK] = "write-back",
};

/* Opens the kept journal (the shard's own kept region) and, after a
 * restart, replays what the last BLK acknowledged; falls back to
 * write-through when there is no kept region (a BLK the shell started).
 * Returns the mode in effect. */
static enum blk_durability open_journal(enum blk_durability mode, struct server_instance shard)
{
    if (mode != BLK_KEPT) {
        blk_set_durability(mode, NULL);
        return mode;
    }
    bool restored = false;
    char name[KEPT_NAME_BYTES];
    uint32_t slots = journal_slots_for(shard.count);
    long error = server_instance_kept_name(SERVER_NAME_BLK, shard.index, name, sizeof name);
    struct journal *journal = error != 0
                                  ? NULL
                                  : kept_region_open(name, journal_bytes(slots), JOURNAL_MAGIC,
                                                     JOURNAL_VERSION, &restored, &error);
    if (journal == NULL) {
        printf("blk: no kept region (%s): writing through\n", error_text(error));
        blk_set_durability(BLK_WRITE_THROUGH, NULL);
        return BLK_WRITE_THROUGH;
    }
    if (!restored)
        journal->slots = slots;
    if (restored) {
        long replayed = journal->slots == slots ? journal_replay(journal, &cache) : -E_CORRUPT;
        if (replayed < 0) {
            printf("blk: replaying the kept journal failed: %s\n", error_text(replayed));
            exit(1); /* keep the journal for the next try */
        }
        printf("blk: restart %lu: replayed %ld acknowledged block writes from the kept journal\n",
               journal->header.starts - 1, replayed);
        printf("@json {\"kind\":\"blk_replay\",\"start\":%lu,\"blocks\":%ld,\"shard\":%u}\n",
               journal->header.starts, replayed, shard.index);
    }
    blk_set_durability(BLK_KEPT, journal);
    return BLK_KEPT;
}

/* Before a block lent writable into mappings is written back (write_only),
 * or a block FS freed is retired: its mapping lends, on every core. */
static void block_revoke(void *context, uint64_t handle, bool write_only)
{
    (void)context;
    long revoked = system_call_ica_revoke(handle, write_only ? 1 : 0);
    if (revoked < 0)
        printf("blk: revoking the mappings of a block failed: %s\n", error_text(revoked));
}

static const struct cache_memory block_memory = {.allocate = block_ica,
                                                 .pinned = block_lent,
                                                 .revoke = block_revoke,
                                                 .held_beyond_mappings =
                                                     block_held_beyond_mappings};

/* blk_read_ahead=N on the kernel command line: the blocks a sequential miss reads ahead
 * (0: none; at most one stripe's), in place of the cache's default (CACHE_READ_AHEAD, or
 * TIER_READ_AHEAD with the NVM tier). make bench-vems compares read-ahead on and off. */
static void apply_read_ahead_asked(struct cache *target)
{
    char value[16];
    if (kernel_option("blk_read_ahead", value, sizeof value) <= 0)
        return;
    uint32_t blocks = (uint32_t)strtoul(value, NULL, 0);
    target->read_ahead = blocks < BLK_STRIPE_BLOCKS ? blocks : BLK_STRIPE_BLOCKS - 1;
}

/* After `tier detach`: the DRAM cache, and the durability asked for. */
static int dram_cache(struct cache *detached)
{
    int error = cache_init(detached, dram.capacity, &dram.disk, &block_memory);
    cache_set_shard(detached, dram.shard.index, dram.shard.count);
    apply_read_ahead_asked(detached);
    if (error == 0)
        open_journal(dram.durability, dram.shard);
    return error;
}

/* The cache: the NVM tier when the boot names one, else DRAM slots. */
static int make_cache(struct server_instance shard, bool *tier)
{
    int attached = blk_tier_attach(&cache, &dram.disk, shard.count, &block_memory);
    *tier = attached == 1;
    if (attached != 0) {
        apply_read_ahead_asked(&cache);
        return attached < 0 ? attached : 0;
    }
    int error = cache_init(&cache, dram.capacity, &dram.disk, &block_memory);
    cache_set_shard(&cache, shard.index, shard.count);
    apply_read_ahead_asked(&cache);
    return error;
}

int main(int argc, char **argv)
{
    struct server_instance shard;
    if (server_instance_parse(argc, argv, &shard) != 0)
        return 1; /* logged */
    struct cache_disk disk;
    int error = disk_client_open(&disk);
    if (error != 0) {
        printf("blk: no disk through dk (%s); not serving\n", error_text(error));
        run_server_instance_placeholder(SERVER_NAME_BLK, shard.index, -E_IO);
    }
    dram.capacity = capacity_from(argc, argv, shard.count);
    dram.disk = disk;
    dram.shard = shard;
    dram.durability = durability_asked(argc, argv);
    bool tier = false;
    error = make_cache(shard, &tier);
    uint32_t capacity = cache.capacity;
    uint32_t lend_limit = lend_limit_from(argc, argv);
    if (error == 0)
        error =
            blk_lends_init(capacity, lend_limit, /* a block or line only mappings see: evictable */
                           block_held_beyond_mappings);
    enum blk_durability durability = tier ? BLK_WRITE_BACK : dram.durability;
    if (error == 0 && tier)
        blk_set_durability(BLK_WRITE_BACK, NULL); /* every write is in the NVM: no journal */
    else if (error == 0)
        durability = open_journal(durability, shard);
    blk_set_dram_cache(dram_cache);
    if (error == 0)
        error = (int)server_register_instance(SERVER_NAME_BLK, shard.index);
    if (error != 0) {
        printf("blk: cannot start: %s\n", error_text(error));
        return 1;
    }
    printf("blk: shard %u of %u, cache of %u blocks (%u KiB%s), disk of %lu blocks%s, %s, lends "
           "of at most %u blocks per client\n",
           shard.index, shard.count, capacity, capacity * (STORAGE_BLOCK_BYTES / 1024),
           tier ? " of NVM tier" : "", disk.blocks,
           disk_client_bytes() % STORAGE_BLOCK_BYTES != 0 ? " (the last one partial)" : "",
           tier ? "writes durable in the NVM tier" : durability_names[durability], lend_limit);
    blk_serve(&cache);
}
