/* test_blk_tier.c: BLK's NVM tier (servers/blk/tier*.c with the cache) over
 * an in-memory NVDIMM and disk: tags and their checks, a block's set,
 * CLOCK within a set, a write that finds no line waiting for a pass, reads
 * that bypass, the pass's sorted and coalesced runs before DK_FLUSH and the
 * tags clean after it, the recovery scan after a reboot, the refusals
 * (another disk, corrupted tags, a changed fingerprint with dirty lines, an
 * NVDIMM too small) that leave the NVDIMM and the disk as they were, and a
 * crash model (nvm_crash_model.c) stopped at random points of writes,
 * barriers and passes, in write-back and write-through mode: every block
 * reads back whole, never older than the last barrier before the crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cache.h"
#include "memory_disk.h"
#include "nvm_crash_model.h"
#include "tier.h"
#include <formica/errors.h>
#include <formica/kept_region.h>
#include <formica/nvm_persist.h>

#define DISK_BLOCKS 1024u
#define SETS 2u
#define LINES (SETS * TIER_MIN_WAYS)
#define NVM_BYTES (TIER_HEADER_BYTES + 4096u + LINES * CACHE_BLOCK_BYTES)

static uint8_t disk_bytes[DISK_BLOCKS][CACHE_BLOCK_BYTES];
static struct memory_disk disk;
static unsigned dirty_tags_at_flush; /* the tags still dirty at the disk's last flush */
static uint8_t disk_serial[20] = "disk-a";
static uint8_t *nvm;
static struct tier tier;
static struct cache cache;

/* The tags in the NVM that say dirty. */
static unsigned dirty_tags(void)
{
    unsigned count = 0;
    for (uint32_t line = 0; tier.tags != NULL && line < tier.lines_count; line++) {
        uint64_t block;
        enum tier_line_state state;
        count += tier_tag_decode(line, tier.tags[line], &block, &state) && state == TIER_DIRTY;
    }
    return count;
}

static int disk_flush(void *context)
{
    dirty_tags_at_flush = dirty_tags();
    return memory_disk_flush(context);
}

static struct cache_disk below(void)
{
    return (struct cache_disk){&disk, disk.blocks, memory_disk_read, memory_disk_write, disk_flush};
}

/* A boot: the tier over `nvm` as it is, mounted. */
static void boot(void)
{
    static uint8_t pool[4][CACHE_BLOCK_BYTES];
    struct cache_disk under = below();
    tier_release(&tier);
    cache_release(&cache);
    assert_int_equal(tier_prepare(&tier, nvm, NVM_BYTES, SETS, 1, &under, disk_serial), 0);
    for (int i = 0; i < 4; i++)
        tier_pool_add(&tier, pool[i], 0);
    assert_int_equal(cache_init_tier(&cache, &tier, &under), 0);
    tier_mount(&tier, &cache);
}

static void fill_pattern(uint8_t *bytes, uint64_t block, uint64_t version)
{
    uint64_t word = block << 32 | version;
    for (size_t i = 0; i < CACHE_BLOCK_BYTES; i += 8)
        memcpy(bytes + i, &word, 8);
}

static void reset_disk(uint64_t blocks)
{
    memory_disk_reset(&disk, disk_bytes, blocks);
    dirty_tags_at_flush = 0;
    for (uint32_t block = 0; block < DISK_BLOCKS; block++)
        fill_pattern(disk.bytes[block], block, 0);
}

static int setup(void **state)
{
    (void)state;
    reset_disk(DISK_BLOCKS);
    nvm = aligned_alloc(4096, NVM_BYTES);
    memset(nvm, 0, NVM_BYTES);
    memset(&tier, 0, sizeof tier);
    memset(&cache, 0, sizeof cache);
    boot();
    assert_int_equal(tier.state, BLK_TIER_ATTACHED);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cache_release(&cache);
    tier_release(&tier);
    memset(&tier, 0, sizeof tier);
    free(nvm);
    return 0;
}

static void write_version(uint64_t block, uint64_t version)
{
    static uint8_t bytes[CACHE_BLOCK_BYTES];
    fill_pattern(bytes, block, version);
    assert_int_equal(cache_write(&cache, block, bytes), 0);
}

static uint64_t read_version(uint64_t block)
{
    static uint8_t bytes[CACHE_BLOCK_BYTES];
    assert_int_equal(cache_read(&cache, block, bytes), 0);
    uint64_t word;
    memcpy(&word, bytes, 8);
    assert_int_equal(word >> 32, block);
    return word & 0xffffffffu;
}

static void test_tags_round_trip_and_scribbles_are_seen(void **state)
{
    (void)state;
    uint64_t block;
    enum tier_line_state line_state;
    assert_int_equal(tier_tag(5, 123, TIER_FREE), 0);
    assert_true(tier_tag_decode(5, 0, &block, &line_state));
    assert_int_equal(line_state, TIER_FREE);
    unsigned unseen = 0;
    for (uint32_t line = 0; line < 64; line++) {
        uint64_t tag = tier_tag(line, 1000 + line * 77, line % 2 ? TIER_DIRTY : TIER_CLEAN);
        assert_true(tier_tag_decode(line, tag, &block, &line_state));
        assert_int_equal(block, 1000 + line * 77);
        assert_int_equal(line_state, line % 2 ? TIER_DIRTY : TIER_CLEAN);
        assert_false(tier_tag_decode(line + 1, tag, &block, &line_state)); /* another line's */
        for (int bit = 0; bit < 64; bit++)
            unseen += tier_tag_decode(line, tag ^ (1ull << bit), &block, &line_state);
    }
    assert_int_equal(unseen, 0); /* every single-bit scribble is seen */
}

static void test_geometry_and_too_small(void **state)
{
    (void)state;
    assert_int_equal(tier_lines_for(NVM_BYTES, SETS, 1), LINES);
    assert_int_equal(tier_lines_for(NVM_BYTES - 4096, SETS, 1), 0);
    assert_int_equal(tier_lines_for(64ull << 20, 16, 1) % 16, 0);
    assert_true(tier_lines_for(64ull << 20, 16, 1) > 16000);
    struct tier small;
    struct cache_disk under = below();
    assert_int_equal(tier_prepare(&small, nvm, 256 << 10, 16, 1, &under, NULL), -E_NO_SPACE);
    assert_int_equal(small.state, BLK_TIER_TOO_SMALL);
    assert_non_null(strstr(small.refusal, "too small"));
    assert_int_equal(tier.lines_count, LINES);
    assert_int_equal(tier.ways, TIER_MIN_WAYS);
}

/* A block's line lies in its set: stripes of 64 blocks alternate sets. */
static void test_a_block_lives_in_its_set(void **state)
{
    (void)state;
    write_version(5, 1);
    write_version(64 + 5, 1);
    write_version(128 + 5, 1);
    struct cache_block *a = cache_lookup(&cache, 5), *b = cache_lookup(&cache, 69),
                       *c = cache_lookup(&cache, 133);
    assert_true(a - cache.blocks < TIER_MIN_WAYS);
    assert_true(b - cache.blocks >= TIER_MIN_WAYS);
    assert_true(c - cache.blocks < TIER_MIN_WAYS);
    assert_int_equal(disk.writes, 0); /* write-back: nothing reached the disk */
}

/* Read misses fill lines (read-ahead on a sequential one) whose tags name
 * their blocks: a reboot finds them clean. */
static void test_filled_lines_are_found_after_a_reboot(void **state)
{
    (void)state;
    assert_int_equal(read_version(10), 0);
    assert_int_equal(read_version(11), 0); /* sequential: reads ahead to the stripe's end */
    assert_int_equal(cache.stats.read_ahead, 32);
    assert_int_equal(read_version(70), 0);
    unsigned cached = cache.stats.cached;
    boot();
    assert_int_equal(tier.state, BLK_TIER_ATTACHED);
    assert_int_equal(cache.stats.cached, cached);
    assert_int_equal(cache.stats.dirty, 0);
    assert_non_null(cache_lookup(&cache, 43));
    assert_non_null(cache_lookup(&cache, 70));
    unsigned reads = disk.reads;
    assert_int_equal(read_version(43), 0);
    assert_int_equal(disk.reads, reads);
}

static uint64_t pinned_copy;
static bool copy_pinned(void *context, uint64_t handle)
{
    (void)context;
    return handle != 0 && handle == pinned_copy;
}

/* A lend of a line is a DRAM copy bound to it: every write shows in it, a
 * line whose copy is lent is no victim, and a freed block's copy keeps
 * the old bytes while the line takes the new ones. */
static void test_lend_copies_follow_their_line_until_freed(void **state)
{
    (void)state;
    static uint8_t copies[2][CACHE_BLOCK_BYTES];
    tier.pool.count = 0;
    tier_pool_add(&tier, copies[0], 101);
    tier_pool_add(&tier, copies[1], 102);
    cache.memory = (struct cache_memory){.pinned = copy_pinned};
    write_version(20, 1);
    uint64_t handle;
    assert_int_equal(cache_lend(&cache, 20, &handle), 0);
    assert_true(handle == 101 || handle == 102);
    uint8_t *copy = copies[handle - 101];
    uint64_t word;
    memcpy(&word, copy, 8);
    assert_int_equal(word, 20ull << 32 | 1);
    write_version(20, 2);
    memcpy(&word, copy + 4088, 8);
    assert_int_equal(word, 20ull << 32 | 2); /* the write shows in the copy */
    uint64_t again;
    assert_int_equal(cache_lend(&cache, 20, &again), 0);
    assert_int_equal(again, handle); /* still bound */
    pinned_copy = handle;
    assert_int_equal(cache_retire(&cache, 20), 0); /* freed while lent */
    write_version(20, 3);
    memcpy(&word, copy, 8);
    assert_int_equal(word, 20ull << 32 | 2); /* the borrower keeps the old bytes */
    assert_int_equal(read_version(20), 3);
    assert_int_equal(cache_lend(&cache, 20, &again), 0);
    assert_true(again != handle && again != 0); /* a fresh copy: the old one is lent */
    pinned_copy = 0;
}

/* A line's own block ICA (SYS_ICA_DEVICE_BLOCK in BLK): handle 5000 + line. */
static uint64_t pinned_line;
static unsigned unbinds;
static bool line_pinned(void *context, uint64_t handle)
{
    (void)context;
    return handle != 0 && handle == pinned_line;
}
static int bind_own_page(void *context, uint8_t *data, uint64_t *handle)
{
    (void)context;
    *handle = 5000 + (uint64_t)(data - tier.lines) / CACHE_BLOCK_BYTES;
    return 0;
}
static void count_unbind(void *context, uint64_t handle)
{
    (void)context;
    (void)handle;
    unbinds++;
}

/* With a kernel to bind lines, a lend is the line itself (no copy): the
 * borrower sees every write; freed while lent and dirty, the line is
 * written back first, its tag freed, its bytes kept, and the block's next
 * write takes another line. */
static void test_lends_bind_the_line_itself_and_a_freed_lent_line_retires(void **state)
{
    (void)state;
    cache.memory =
        (struct cache_memory){.pinned = line_pinned, .bind = bind_own_page, .unbind = count_unbind};
    write_version(20, 1);
    uint64_t handle;
    assert_int_equal(cache_lend(&cache, 20, &handle), 0);
    uint32_t line = (uint32_t)(handle - 5000);
    assert_true(handle >= 5000 && line < LINES);
    assert_ptr_equal(cache.blocks[line].data, tier_line_data(&tier, line));
    assert_int_equal(tier.direct_binds, 1);
    assert_int_equal(tier.lend_copies, 0);
    write_version(20, 2); /* dirty: lands in the very line */
    uint64_t word;
    memcpy(&word, tier_line_data(&tier, line) + 4088, 8);
    assert_int_equal(word, 20ull << 32 | 2);
    uint64_t again;
    assert_int_equal(cache_lend(&cache, 20, &again), 0);
    assert_int_equal(again, handle);
    assert_int_equal(tier.direct_binds, 1); /* bound once */
    pinned_line = handle;
    unsigned writes = disk.writes;
    assert_int_equal(cache_retire(&cache, 20), 0);
    assert_true(disk.writes > writes);    /* its dirty bytes reached the disk first */
    assert_int_equal(tier.tags[line], 0); /* no tag names it any more */
    assert_null(cache_lookup(&cache, 20));
    write_version(20, 3);
    memcpy(&word, tier_line_data(&tier, line), 8);
    assert_int_equal(word, 20ull << 32 | 2); /* the borrower keeps the old bytes */
    assert_int_equal(read_version(20), 3);
    assert_true(cache_lookup(&cache, 20) != &cache.blocks[line]);
    pinned_line = 0;
    assert_int_equal(unbinds, 0); /* fewer than TIER_BOUND_MAX bound: none recycled */
}

/* A copy is borrowed as soon as it is some line's (handles 1000 + index). */
static bool every_copy_pinned(void *context, uint64_t handle)
{
    (void)context;
    return handle >= 1000 && tier.pool.line[handle - 1000] != 0;
}

/* Every line of set 0 clean with its copy lent: a write there finds no line
 * even after a pass and goes to the disk (nothing is dirty: the order
 * holds); a patch too. */
static void test_writes_go_around_a_set_whose_copies_are_all_lent(void **state)
{
    (void)state;
    static uint8_t copies[TIER_MIN_WAYS][CACHE_BLOCK_BYTES];
    tier.pool.count = 0;
    for (uint32_t i = 0; i < TIER_MIN_WAYS; i++)
        tier_pool_add(&tier, copies[i], 1000 + i);
    cache.memory = (struct cache_memory){.pinned = every_copy_pinned};
    uint64_t handle;
    for (uint64_t block = 0; block < TIER_MIN_WAYS; block++)
        assert_int_equal(cache_lend(&cache, block, &handle), 0);
    for (uint64_t block = 0; block < TIER_MIN_WAYS; block++)
        assert_non_null(cache_lookup(&cache, block)); /* set 0 full, every copy lent */
    write_version(130, 7);
    uint64_t word;
    memcpy(&word, disk.bytes[130], 8);
    assert_int_equal(word, 130ull << 32 | 7);
    assert_null(cache_lookup(&cache, 130));
    static const uint8_t bytes[16] = {1, 2, 3};
    assert_int_equal(cache_patch_any(&cache, 131, 8, bytes, sizeof bytes), 0);
    assert_int_equal(disk.bytes[131][8], 1);
    assert_int_equal(disk.bytes[131][10], 3);
    cache.memory = (struct cache_memory){0};
}

/* Writes land in NVM: after a reboot the dirty lines are found and served;
 * a pass writes them back, sorted and coalesced, DK_FLUSH after, tags clean. */
static void test_dirty_lines_survive_a_reboot_and_a_pass_writes_them(void **state)
{
    (void)state;
    uint64_t order[] = {7, 3, 5, 4, 6, 200, 199, 2, 64, 0};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        write_version(order[i], 10 + order[i]);
    assert_int_equal(tier_barrier(&cache), 0);
    boot();
    assert_int_equal(tier.state, BLK_TIER_ATTACHED);
    assert_int_equal(cache.stats.dirty, 10);
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        assert_int_equal(read_version(order[i]), 10 + order[i]);
    assert_int_equal(disk.writes, 0);
    assert_int_equal(tier_pass(&cache), 0);
    /* runs: 0, 2..7, 64, 199..200, in block order, then one flush */
    assert_int_equal(disk.writes, 4);
    assert_int_equal(disk.write_first[0], 0);
    assert_int_equal(disk.write_count[0], 1);
    assert_int_equal(disk.write_first[1], 2);
    assert_int_equal(disk.write_count[1], 6);
    assert_int_equal(disk.write_first[2], 64);
    assert_int_equal(disk.write_first[3], 199);
    assert_int_equal(disk.write_count[3], 2);
    assert_int_equal(disk.flushes, 1);
    assert_int_equal(disk.writes_at_flush, 4);
    assert_int_equal(dirty_tags_at_flush, 10); /* no tag clean before DK_FLUSH */
    assert_int_equal(dirty_tags(), 0);
    assert_int_equal(cache.stats.dirty, 0);
    assert_int_equal(tier.writeback_runs, 4);
    assert_int_equal(tier.writeback_bytes, 10 * CACHE_BLOCK_BYTES);
    uint64_t word;
    memcpy(&word, disk.bytes[5], 8);
    assert_int_equal(word, 5ull << 32 | 15);
    boot(); /* the fingerprint followed block 0 to the disk: still this disk's */
    assert_int_equal(tier.state, BLK_TIER_ATTACHED);
    assert_int_equal(cache.stats.dirty, 0);
    assert_int_equal(cache.stats.cached, 10);
    assert_int_equal(read_version(0), 10);
}

/* 64 dirty lines fill set 0: the next write there waits for a pass; a read
 * of set 0 meanwhile bypasses the tier. */
static void test_a_full_set_makes_writes_wait_and_reads_bypass(void **state)
{
    (void)state;
    for (uint64_t i = 0; i < TIER_MIN_WAYS; i++)
        write_version((i / 64) * 128 + i % 64 + (i >= 64 ? 0 : 0), 1);
    assert_int_equal(cache.stats.dirty, TIER_MIN_WAYS);
    assert_int_equal(read_version(300), 0); /* block 300: stripe 4, set 0 */
    assert_int_equal(tier.bypasses, 1);
    assert_null(cache_lookup(&cache, 300));
    assert_int_equal(read_version(64), 0); /* set 1 has room: cached */
    assert_non_null(cache_lookup(&cache, 64));
    write_version(301, 2);
    assert_int_equal(tier.passes, 1);
    assert_int_equal(disk.writes, 1); /* blocks 0..63: one run of 64 */
    assert_int_equal(disk.write_count[0], 64);
    assert_int_equal(cache.stats.dirty, 1);
    assert_int_equal(read_version(301), 2);
}

/* A sequential write stream longer than the lines a write could take goes
 * around the tier; short ones and block 0 never do. */
static void test_long_sequential_streams_bypass(void **state)
{
    (void)state;
    for (uint64_t block = 1; block < 600; block++)
        write_version(block, 3);
    assert_true(tier.bypasses > 0);
    for (uint64_t block = 1; block < 600; block++)
        assert_int_equal(read_version(block), 3);
}

static void test_write_through_keeps_the_disk_current(void **state)
{
    (void)state;
    tier.write_through = true;
    write_version(9, 4);
    uint64_t word;
    memcpy(&word, disk.bytes[9], 8);
    assert_int_equal(word, 9ull << 32 | 4);
    assert_int_equal(tier_barrier(&cache), 0);
    assert_int_equal(cache.stats.dirty, 0);
    assert_int_equal(disk.writes, 1); /* the pass did not write it again */
}

/* A failed run leaves its lines dirty (said), the next pass writes them. */
static void test_a_disk_error_keeps_lines_dirty(void **state)
{
    (void)state;
    write_version(10, 5);
    disk.fail_writes = 1;
    assert_int_equal(tier_pass(&cache), -E_IO);
    assert_int_equal(cache.stats.dirty, 1);
    assert_int_equal(tier.pass_failures, 1);
    disk.fail_writes = 0;
    assert_int_equal(tier_pass(&cache), 0);
    assert_int_equal(cache.stats.dirty, 0);
}

static void assert_refused_untouched(const char *why)
{
    uint8_t *before = malloc(NVM_BYTES);
    memcpy(before, nvm, NVM_BYTES);
    unsigned writes = disk.writes;
    boot();
    assert_int_equal(tier.state, BLK_TIER_REFUSED);
    assert_non_null(strstr(tier.refusal, why));
    assert_memory_equal(before, nvm, NVM_BYTES);
    assert_int_equal(disk.writes, writes);
    assert_int_equal(cache.stats.cached, 0);
    free(before);
}

static void test_a_tier_of_another_disk_is_refused(void **state)
{
    (void)state;
    write_version(3, 1);
    tier_barrier(&cache);
    disk.blocks = DISK_BLOCKS - 8; /* another disk: its size differs */
    assert_refused_untouched("written for disk serial disk-a, 8192 sectors; this disk is disk-a, "
                             "8128 sectors");
    disk.blocks = DISK_BLOCKS;
    memcpy(disk_serial, "disk-b", 6); /* the same size, another serial */
    assert_refused_untouched("written for disk serial disk-a, 8192 sectors; this disk is disk-b");
    memcpy(disk_serial, "disk-a", 6);
}

static void test_corrupted_tags_are_refused(void **state)
{
    (void)state;
    write_version(3, 1);
    write_version(4, 1);
    tier_barrier(&cache);
    uint32_t line = (uint32_t)(cache_lookup(&cache, 3) - cache.blocks);
    tier.tags[line] ^= 1ull << 20;
    assert_refused_untouched("corrupted tags");
    tier.tags[line] ^= 1ull << 20;
    uint32_t other = (uint32_t)(cache_lookup(&cache, 4) - cache.blocks);
    (void)other;
    boot();
    assert_int_equal(tier.state, BLK_TIER_ATTACHED);
    uint32_t free_line = 0;
    while (tier.tags[free_line] != 0)
        free_line++;
    tier.tags[free_line] = tier_tag(free_line, 3, TIER_CLEAN); /* block 3 named twice */
    assert_refused_untouched("corrupted tags");
}

/* The disk written without the tier (block 0 changed): clean lines are
 * dropped; with dirty lines the tier is refused. */
static void test_a_changed_fingerprint(void **state)
{
    (void)state;
    write_version(3, 1);
    assert_int_equal(tier_pass(&cache), 0);
    fill_pattern(disk.bytes[0], 0, 99);
    boot();
    assert_int_equal(tier.state, BLK_TIER_ATTACHED);
    assert_int_equal(cache.stats.cached, 0);
    write_version(3, 2);
    tier_barrier(&cache);
    fill_pattern(disk.bytes[0], 0, 98);
    assert_refused_untouched("written without this tier");
}

/* A detached tier starts clean at the next attach. */
static void test_a_detached_tier_starts_clean(void **state)
{
    (void)state;
    write_version(3, 1);
    assert_int_equal(tier_pass(&cache), 0);
    tier_write_header(&tier, TIER_FLAG_DETACHED);
    boot();
    assert_int_equal(tier.state, BLK_TIER_ATTACHED);
    assert_int_equal(cache.stats.cached, 0);
    assert_int_equal(read_version(3), 1);
}

/* The crash campaign. */
#define CRASH_BLOCKS 300u
static uint64_t written[CRASH_BLOCKS], synced[CRASH_BLOCKS];

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

/* Writes (some patches), barriers and passes; `low`/`high`: what each block
 * may read back after a crash during the operation in flight. */
static void crash_workload(struct crash_model *model, uint64_t seed, uint64_t *low, uint64_t *high,
                           bool *snapshotted)
{
    uint64_t random = seed;
    for (int op = 0; op < 400; op++) {
        uint64_t before[CRASH_BLOCKS];
        memcpy(before, synced, sizeof before);
        uint64_t choice = next_random(&random) % 20;
        if (choice == 0) {
            tier_barrier(&cache);
            memcpy(synced, written, sizeof synced);
        } else if (choice == 1) {
            tier_pass(&cache);
        } else {
            uint64_t block = next_random(&random) % CRASH_BLOCKS;
            if (block < 150)
                block = (block / 30) * 64 + block % 30; /* crowd set 0 and 1's stripes */
            block %= CRASH_BLOCKS;
            written[block]++;
            write_version(block, written[block]);
        }
        if (model->crashed && !*snapshotted) {
            memcpy(low, before, sizeof before);
            memcpy(high, written, sizeof written);
            *snapshotted = true;
        }
    }
}

/* After the crash: every block whole (one pattern per 8-byte word: a torn
 * unsynced write may mix versions), each word between what the last barrier
 * made durable and the newest write begun. */
static bool recovered_well(const uint64_t *low, const uint64_t *high)
{
    boot();
    if (tier.state != BLK_TIER_ATTACHED)
        return false;
    static uint8_t bytes[CACHE_BLOCK_BYTES];
    for (uint64_t block = 0; block < CRASH_BLOCKS; block++) {
        if (cache_read(&cache, block, bytes) != 0)
            return false;
        for (size_t i = 0; i < CACHE_BLOCK_BYTES; i += 8) {
            uint64_t word;
            memcpy(&word, bytes + i, 8);
            uint64_t version = word & 0xffffffffu;
            if (word >> 32 != block || version < low[block] || version > high[block]) {
                printf("block %lu word %zu: %#lx, expected versions %lu..%lu\n",
                       (unsigned long)block, i / 8, (unsigned long)word, (unsigned long)low[block],
                       (unsigned long)high[block]);
                return false;
            }
        }
    }
    return tier_pass(&cache) == 0 && cache.stats.dirty == 0;
}

static void test_crashes_anywhere_lose_nothing_synced(void **state)
{
    (void)state;
    teardown(NULL);
    int failed = 0, crashed = 0;
    uint64_t events = 0;
    for (unsigned mode = 0; mode <= (CRASH_SOME_UNFENCED | CRASH_SOME_EVICTED); mode++) {
        for (uint64_t trial = 0; trial < 40; trial++) {
            struct crash_model model;
            uint64_t seed = 0x7ea0000u + trial * 7 + mode;
            crash_model_init(&model, NVM_BYTES, 0, mode, UINT64_MAX, seed, NULL);
            reset_disk(DISK_BLOCKS);
            disk.stopped = &model.crashed;
            nvm = model.memory;
            memset(&tier, 0, sizeof tier);
            memset(&cache, 0, sizeof cache);
            boot();
            assert_int_equal(tier.state, BLK_TIER_ATTACHED);
            tier.write_through = trial % 4 == 3; /* write-through's order too */
            memset(written, 0, sizeof written);
            memset(synced, 0, sizeof synced);
            model.crash_at = model.events + (seed * 2654435761u) % 2000;
            uint64_t low[CRASH_BLOCKS], high[CRASH_BLOCKS];
            bool snapshotted = false;
            crash_workload(&model, seed, low, high, &snapshotted);
            nvm_observe(NULL);
            if (!snapshotted) {
                memcpy(low, synced, sizeof low);
                memcpy(high, written, sizeof high);
            }
            crashed += model.crashed;
            events += model.events;
            disk.stopped = NULL;
            nvm = malloc(NVM_BYTES);
            memcpy(nvm, crash_model_image(&model), NVM_BYTES);
            if (!recovered_well(low, high)) {
                failed++;
                printf("trial %lu mode %u crashed %d: state %u %s\n", (unsigned long)trial, mode,
                       model.crashed, tier.state, tier.refusal);
            }
            crash_model_free(&model);
            cache_release(&cache);
            tier_release(&tier);
            free(nvm);
            nvm = NULL;
        }
    }
    printf("%d of 160 runs crashed, %lu events in all\n", crashed, (unsigned long)events);
    assert_int_equal(failed, 0);
    assert_true(crashed > 100);
    setup(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tags_round_trip_and_scribbles_are_seen),
        cmocka_unit_test_setup_teardown(test_geometry_and_too_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_block_lives_in_its_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filled_lines_are_found_after_a_reboot, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lend_copies_follow_their_line_until_freed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_lends_bind_the_line_itself_and_a_freed_lent_line_retires, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes_go_around_a_set_whose_copies_are_all_lent,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_dirty_lines_survive_a_reboot_and_a_pass_writes_them,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_full_set_makes_writes_wait_and_reads_bypass, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_long_sequential_streams_bypass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_through_keeps_the_disk_current, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_disk_error_keeps_lines_dirty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_tier_of_another_disk_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupted_tags_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_changed_fingerprint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_detached_tier_starts_clean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crashes_anywhere_lose_nothing_synced, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
