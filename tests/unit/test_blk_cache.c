/* test_blk_cache.c: BLK's file cache (servers/blk/cache*.c) over an in-memory
 * disk: hits and misses, read-ahead on sequential misses, CLOCK's second
 * chance, write-back on sync and on eviction, lent (pinned) blocks never
 * reused, block memory from the caller's allocator, disk errors, a shard's
 * cache (only its blocks, read-ahead inside its stripes), the
 * limits on lent blocks (cache_lends.c): per client, in all, ended lends,
 * and freed blocks retired (cache_retire, retired_blocks.c): a lent page
 * keeps its old bytes while the block's next owner writes a fresh slot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cache.h"
#include "cache_lends.h"
#include "memory_disk.h"
#include "retired_blocks.h"
#include <formica/errors.h>

#define DISK_BLOCKS 256u
#define CAPACITY 32u

static uint8_t disk_bytes[DISK_BLOCKS][CACHE_BLOCK_BYTES];
static struct memory_disk disk;
static struct cache cache;
static uint64_t pinned_handle;

static int handle_counter;
static int allocate_with_handle(void *context, uint8_t **data, uint64_t *handle)
{
    (void)context;
    *data = calloc(1, CACHE_BLOCK_BYTES);
    *handle = (uint64_t)++handle_counter;
    return *data != NULL ? 0 : -E_NO_MEMORY;
}

static bool is_pinned(void *context, uint64_t handle)
{
    (void)context;
    return handle == pinned_handle;
}

/* The revocations the cache asked for (mapping lends, docs/mmap.md). */
static struct {
    uint32_t count;
    uint64_t handle;
    bool write_only;
} revoked;

static void record_revoke(void *context, uint64_t handle, bool write_only)
{
    (void)context;
    revoked.count++;
    revoked.handle = handle;
    revoked.write_only = write_only;
}

static int setup(void **state)
{
    (void)state;
    memory_disk_reset(&disk, disk_bytes, DISK_BLOCKS);
    for (uint32_t block = 0; block < DISK_BLOCKS; block++)
        memset(disk.bytes[block], (int)(block & 0xff), CACHE_BLOCK_BYTES);
    struct cache_disk below = {&disk, DISK_BLOCKS, memory_disk_read, memory_disk_write,
                               memory_disk_flush};
    pinned_handle = 0;
    handle_counter = 0;
    memset(&revoked, 0, sizeof(revoked));
    struct cache_memory memory = {
        .allocate = allocate_with_handle, .pinned = is_pinned, .revoke = record_revoke};
    return cache_init(&cache, CAPACITY, &below, &memory);
}

/* Frees what cache_init allocated: blocks from our allocator one by one, or
 * the one heap area that starts at the first block. */
static void free_cache(struct cache *victim, bool own_allocator)
{
    if (own_allocator)
        for (uint32_t i = 0; i < victim->capacity; i++)
            free(victim->blocks[i].data);
    else
        free(victim->blocks[0].data);
    free(victim->blocks);
    free(victim->buckets);
}

static int teardown(void **state)
{
    (void)state;
    free_cache(&cache, true);
    return 0;
}

static bool cached(uint64_t number)
{
    struct cache_stats before, after;
    uint8_t buffer[CACHE_BLOCK_BYTES];
    cache_get_stats(&cache, &before);
    cache_read(&cache, number, buffer);
    cache_get_stats(&cache, &after);
    return after.hits == before.hits + 1;
}

static void read_block(uint64_t number)
{
    uint8_t buffer[CACHE_BLOCK_BYTES];
    assert_int_equal(cache_read(&cache, number, buffer), 0);
    assert_int_equal(buffer[0], (uint8_t)number);
    assert_int_equal(buffer[CACHE_BLOCK_BYTES - 1], (uint8_t)number);
}

static void test_miss_then_hit(void **state)
{
    (void)state;
    read_block(7);
    read_block(7);
    struct cache_stats stats;
    cache_get_stats(&cache, &stats);
    assert_int_equal(stats.misses, 1);
    assert_int_equal(stats.hits, 1);
    assert_int_equal(disk.reads, 1);
}

static void test_sequential_miss_reads_ahead(void **state)
{
    (void)state;
    read_block(10);
    read_block(11); /* a miss right after a miss on 10: reads 11 and the next blocks */
    assert_int_equal(disk.reads, 2);
    for (uint64_t number = 12; number < 12 + CACHE_READ_AHEAD; number++)
        read_block(number);
    assert_int_equal(disk.reads, 2);
    struct cache_stats stats;
    cache_get_stats(&cache, &stats);
    assert_int_equal(stats.read_ahead, CACHE_READ_AHEAD);
}

static void test_clock_gives_a_second_chance(void **state)
{
    (void)state;
    for (uint64_t i = 0; i < CAPACITY; i++)
        read_block(2 * i); /* every slot full and referenced; no read-ahead (not sequential) */
    read_block(100);       /* the hand clears every bit, then takes slot 0 (block 0) */
    read_block(2);         /* a hit: block 2 is referenced again */
    read_block(102);       /* block 2 is passed over; block 4, unreferenced, goes */
    assert_true(cached(2));
    assert_false(cached(4));
    assert_false(cached(0));
}

static void test_writes_reach_the_disk_on_sync(void **state)
{
    (void)state;
    uint8_t block[CACHE_BLOCK_BYTES];
    memset(block, 0xab, sizeof(block));
    for (uint64_t number = 20; number < 24; number++)
        assert_int_equal(cache_write(&cache, number, block), 0);
    assert_int_equal(disk.bytes[21][0], 21);
    assert_int_equal(cache_sync(&cache), 0);
    for (uint64_t number = 20; number < 24; number++)
        assert_int_equal(disk.bytes[number][100], 0xab);
    assert_int_equal(disk.writes, 1); /* one run of four consecutive blocks */
    struct cache_stats stats;
    cache_get_stats(&cache, &stats);
    assert_int_equal(stats.dirty, 0);
}

/* A sync is a barrier: the disk's cache is flushed after the last write. */
static void test_sync_flushes_after_writing(void **state)
{
    (void)state;
    uint8_t block[CACHE_BLOCK_BYTES];
    memset(block, 0x5a, sizeof block);
    assert_int_equal(cache_write(&cache, 3, block), 0);
    assert_int_equal(cache_write(&cache, 9, block), 0);
    assert_int_equal(cache_sync(&cache), 0);
    assert_int_equal(disk.flushes, 1);
    assert_int_equal(disk.writes_at_flush, disk.writes);
    assert_int_equal(disk.writes, 2);
    assert_int_equal(cache_sync(&cache), 0); /* nothing dirty: still a barrier */
    assert_int_equal(disk.flushes, 2);
}

static void test_evicted_dirty_blocks_are_written_back(void **state)
{
    (void)state;
    uint8_t block[CACHE_BLOCK_BYTES];
    for (uint64_t i = 0; i < CAPACITY; i++) {
        memset(block, (int)(0x80 | i), sizeof(block));
        assert_int_equal(cache_write(&cache, 3 * i, block), 0);
    }
    for (uint64_t i = 0; i < 2 * CAPACITY; i++)
        read_block(200 + 2 * (i % 25));
    struct cache_stats stats;
    cache_get_stats(&cache, &stats);
    assert_true(stats.evictions >= 25 && stats.written_back >= 25);
    /* Nothing lost: each written block is on the disk or still in the cache. */
    for (uint64_t i = 0; i < CAPACITY; i++) {
        if (disk.bytes[3 * i][0] == (uint8_t)(0x80 | i))
            continue;
        assert_int_equal(cache_read(&cache, 3 * i, block), 0);
        assert_int_equal(block[0], (uint8_t)(0x80 | i));
    }
}

static void test_lent_block_is_never_reused(void **state)
{
    (void)state;
    uint64_t handle = 0;
    assert_int_equal(cache_lend(&cache, 50, &handle), 0);
    assert_true(handle != 0);
    pinned_handle = handle;
    for (uint64_t i = 0; i < 4 * CAPACITY; i++)
        read_block(60 + 2 * (i % 90));
    assert_true(cached(50));
    pinned_handle = 0;
    for (uint64_t i = 0; i < 4 * CAPACITY; i++)
        read_block(61 + 2 * (i % 90));
    assert_false(cached(50));
}

/* The bytes the slot holding block ICA `handle` keeps (what a borrower sees). */
static const uint8_t *page_of(uint64_t handle)
{
    for (uint32_t i = 0; i < cache.capacity; i++)
        if (cache.blocks[i].handle == handle)
            return cache.blocks[i].data;
    return NULL;
}

static uint64_t lend_and_pin(uint64_t number)
{
    uint64_t handle = 0;
    assert_int_equal(cache_lend(&cache, number, &handle), 0);
    assert_true(handle != 0);
    pinned_handle = handle;
    return handle;
}

/* FS freed block 50 while it is lent: the next owner's write takes a fresh
 * slot, the borrower's page keeps the old bytes, and the retired slot is
 * reused only once nobody borrows it. */
static void test_a_freed_lent_block_keeps_its_old_bytes(void **state)
{
    (void)state;
    uint64_t handle = lend_and_pin(50);
    const uint8_t *page = page_of(handle);
    assert_int_equal(cache_retire(&cache, 50), 0);
    uint8_t block[CACHE_BLOCK_BYTES];
    memset(block, 0xee, sizeof block);
    assert_int_equal(cache_write(&cache, 50, block), 0);
    assert_int_equal(page[0], 50);
    assert_int_equal(page[CACHE_BLOCK_BYTES - 1], 50);
    uint8_t read[CACHE_BLOCK_BYTES];
    assert_int_equal(cache_read(&cache, 50, read), 0);
    assert_int_equal(read[0], 0xee);
    for (uint64_t i = 0; i < 4 * CAPACITY; i++)
        read_block(60 + 2 * (i % 90));
    assert_int_equal(page[0], 50); /* not reused while lent */
    struct cache_stats stats;
    cache_get_stats(&cache, &stats);
    assert_int_equal(stats.retired, 1);
    assert_int_equal(cache_sync(&cache), 0);
    assert_int_equal(disk.bytes[50][0], 0xee); /* the retired page never reaches the disk */
    pinned_handle = 0;
    for (uint64_t i = 0; i < 4 * CAPACITY; i++)
        read_block(61 + 2 * (i % 90));
    assert_int_not_equal(page[0], 50); /* reused once the lend ended */
}

/* A block lent writable into a mapping is dirty at once, and its mappings
 * are write-protected before it is written back (once: the next store's
 * fault lends it writable again); one written back since is not. */
static void test_a_block_stored_into_is_write_protected_before_write_back(void **state)
{
    (void)state;
    uint64_t handle = lend_and_pin(70);
    assert_int_equal(cache_lent_for_stores(&cache, 70), 0);
    struct cache_stats stats;
    cache_get_stats(&cache, &stats);
    assert_int_equal(stats.dirty, 1);
    ((uint8_t *)page_of(handle))[9] = 0x5c; /* the mapper's store, in place */
    assert_int_equal(cache_sync(&cache), 0);
    assert_int_equal(revoked.count, 1);
    assert_int_equal(revoked.handle, handle);
    assert_true(revoked.write_only);
    assert_int_equal(disk.bytes[70][9], 0x5c);
    assert_int_equal(cache_write(&cache, 70, disk.bytes[70]), 0); /* dirty again, not stored into */
    assert_int_equal(cache_sync(&cache), 0);
    assert_int_equal(revoked.count, 1);
    assert_int_equal(cache_lent_for_stores(&cache, 99999), -E_NOT_FOUND);
    pinned_handle = 0;
}

/* A lent block FS frees has its mappings ended before it is retired; an
 * unlent one asks for no revocation. */
static void test_a_freed_lent_block_has_its_mappings_ended(void **state)
{
    (void)state;
    read_block(80);
    assert_int_equal(cache_retire(&cache, 80), 0);
    assert_int_equal(revoked.count, 0);
    uint64_t handle = lend_and_pin(81);
    assert_int_equal(cache_retire(&cache, 81), 0);
    assert_int_equal(revoked.count, 1);
    assert_int_equal(revoked.handle, handle);
    assert_false(revoked.write_only);
    pinned_handle = 0;
}

/* A dirty lent block that is freed is written back before it leaves (an FS
 * that ends before its commit may undo the free), then never again. */
static void test_a_freed_lent_dirty_block_is_written_back_first(void **state)
{
    (void)state;
    uint8_t block[CACHE_BLOCK_BYTES];
    memset(block, 0x5a, sizeof block);
    assert_int_equal(cache_write(&cache, 70, block), 0);
    uint64_t handle = lend_and_pin(70);
    assert_int_equal(cache_retire(&cache, 70), 0);
    assert_int_equal(disk.bytes[70][0], 0x5a);
    struct cache_stats stats;
    cache_get_stats(&cache, &stats);
    assert_int_equal(stats.dirty, 0);
    memset(block, 0x6b, sizeof block);
    assert_int_equal(cache_write(&cache, 70, block), 0);
    assert_int_equal(page_of(handle)[0], 0x5a);
    assert_int_equal(cache_sync(&cache), 0);
    assert_int_equal(disk.bytes[70][0], 0x6b);
}

/* Nobody sees a freed dirty block that is not lent: it stays in place (its
 * next owner overwrites it); a clean one leaves the cache. */
static void test_freed_blocks_nobody_borrows(void **state)
{
    (void)state;
    uint8_t block[CACHE_BLOCK_BYTES];
    memset(block, 0x7c, sizeof block);
    assert_int_equal(cache_write(&cache, 80, block), 0);
    read_block(81);
    unsigned writes = disk.writes;
    assert_int_equal(cache_retire(&cache, 80), 0);
    assert_int_equal(cache_retire(&cache, 81), 0);
    assert_int_equal(cache_retire(&cache, 82), 0); /* not cached: nothing to do */
    assert_int_equal(disk.writes, writes);
    assert_non_null(cache_dirty_contents(&cache, 80));
    assert_false(cached(81));
}

/* An FS owner's start: every lent block retired, the others kept. */
static void test_retiring_every_lent_block(void **state)
{
    (void)state;
    read_block(90);
    uint64_t handle = lend_and_pin(91);
    cache_retire_lent(&cache);
    assert_true(cached(90));
    assert_false(cached(91));
    assert_int_equal(page_of(handle)[0], 91);
}

/* A view as of sequence 10 is served until a block is retired after it;
 * collisions only refuse; a retire of unknown sequence refuses every view
 * until sealed; a floor covers every block. */
static void test_retired_blocks_against_views(void **state)
{
    (void)state;
    static struct retired_blocks retired;
    memset(&retired, 0, sizeof retired);
    assert_true(retired_blocks_unchanged_since(&retired, 7, 0));
    retired_blocks_note(&retired, 7, 10);
    assert_true(retired_blocks_unchanged_since(&retired, 7, 10));
    assert_false(retired_blocks_unchanged_since(&retired, 7, 9));
    assert_true(retired_blocks_unchanged_since(&retired, 8, 9));
    retired_blocks_note(&retired, 7, 4); /* an older retire never lowers it */
    assert_false(retired_blocks_unchanged_since(&retired, 7, 9));
    uint64_t twin = 8;
    while (retired_bucket_of(twin) != retired_bucket_of(7))
        twin++;
    assert_false(retired_blocks_unchanged_since(&retired, twin, 9)); /* refused, never let by */
    retired_blocks_note(&retired, 100, UINT64_MAX);
    assert_false(retired_blocks_unchanged_since(&retired, 100, 1000));
    assert_true(retired_blocks_unchanged_since(&retired, 7, 1000));
    retired_blocks_seal(&retired, 20);
    assert_false(retired_blocks_unchanged_since(&retired, 100, 19));
    assert_true(retired_blocks_unchanged_since(&retired, 100, 20));
    retired_blocks_note_all(&retired, UINT64_MAX);
    assert_false(retired_blocks_unchanged_since(&retired, 5, 1000));
    retired_blocks_seal(&retired, 30);
    assert_false(retired_blocks_unchanged_since(&retired, 5, 29));
    assert_true(retired_blocks_unchanged_since(&retired, 5, 30));
}

/* Shard 1 of 2 owns blocks 64..127 and 192..255 of the 256: it reads,
 * writes and patches only those, and never touches the disk for others. */
static void test_shard_refuses_blocks_of_other_shards(void **state)
{
    (void)state;
    cache_set_shard(&cache, 1, 2);
    uint8_t buffer[CACHE_BLOCK_BYTES] = {0};
    uint64_t handle = 0;
    read_block(64);
    read_block(200);
    assert_int_equal(disk.reads, 2);
    assert_int_equal(cache_read(&cache, 63, buffer), -E_INVALID);
    assert_int_equal(cache_read(&cache, 128, buffer), -E_INVALID);
    assert_int_equal(cache_lend(&cache, 0, &handle), -E_INVALID);
    assert_int_equal(cache_write(&cache, 5, buffer), -E_INVALID);
    assert_int_equal(cache_patch(&cache, 130, 0, buffer, 8), -E_INVALID);
    assert_int_equal(disk.reads, 2);
    assert_int_equal(cache_write(&cache, 65, buffer), 0);
    assert_int_equal(cache_sync(&cache), 0);
    assert_int_equal(disk.blocks_written, 1);
    assert_false(cache_owns(&cache, 127 + 1));
    assert_true(cache_owns(&cache, 255));
}

/* Read-ahead stops where the shard's stripe ends (the next blocks are the
 * other shard's) and follows a sequential reader into the shard's next
 * stripe. */
static void test_shard_read_ahead_stays_in_its_stripes(void **state)
{
    (void)state;
    cache_set_shard(&cache, 0, 2);
    read_block(60);
    read_block(61); /* sequential: 61..63, not past the stripe's end */
    struct cache_stats stats;
    cache_get_stats(&cache, &stats);
    assert_int_equal(stats.read_ahead, 2);
    read_block(62);
    read_block(63);
    assert_int_equal(disk.reads, 2);
    read_block(128); /* the shard's next block after 63: a sequential miss again */
    cache_get_stats(&cache, &stats);
    assert_int_equal(stats.read_ahead, 2 + CACHE_READ_AHEAD);
    for (uint64_t number = 129; number <= 128 + CACHE_READ_AHEAD; number++)
        read_block(number);
    assert_int_equal(disk.reads, 3);
}

static void test_bad_block_and_disk_error(void **state)
{
    (void)state;
    uint8_t buffer[CACHE_BLOCK_BYTES];
    assert_int_equal(cache_read(&cache, DISK_BLOCKS, buffer), -E_INVALID);
    assert_int_equal(cache_write(&cache, DISK_BLOCKS + 5, buffer), -E_INVALID);
    disk.fail_reads = 1;
    assert_int_equal(cache_read(&cache, 3, buffer), -E_IO);
    disk.fail_reads = 0;
    read_block(3); /* the failed read left nothing behind */
}

static void test_heap_memory_when_no_allocator(void **state)
{
    (void)state;
    struct cache plain;
    struct cache_disk below = {&disk, DISK_BLOCKS, memory_disk_read, memory_disk_write,
                               memory_disk_flush};
    assert_int_equal(cache_init(&plain, CAPACITY, &below, NULL), 0);
    uint64_t handle = 99;
    assert_int_equal(cache_lend(&plain, 5, &handle), 0);
    assert_int_equal(handle, 0); /* heap blocks cannot be lent */
    free_cache(&plain, false);
    assert_int_equal(cache_init(&plain, CACHE_MAX_RUN, &below, NULL), -E_INVALID);
}

/* Lends that ended: handles listed here are no longer lent. */
static uint64_t ended[16];
static unsigned ended_count;

static bool lend_still_open(void *context, uint64_t handle)
{
    (void)context;
    for (unsigned i = 0; i < ended_count; i++)
        if (ended[i] == handle)
            return false;
    return true;
}

/* Control ICA ids as the kernel makes them: generation << 32 | kind << 24 | index. */
static uint64_t control_id(uint32_t generation, uint32_t index)
{
    return (uint64_t)generation << 32 | 1ull << 24 | index;
}

static void test_lends_stop_at_the_client_limit(void **state)
{
    (void)state;
    struct cache_lends lends;
    ended_count = 0;
    assert_int_equal(cache_lends_init(&lends, 16, 4, lend_still_open, NULL), 0);
    uint64_t handles[4] = {1, 2, 3, 4};
    assert_true(cache_lends_allow(&lends, 7, 4));
    cache_lends_record(&lends, control_id(1, 10), 7, handles, 2);
    cache_lends_record(&lends, control_id(1, 11), 7, handles + 2, 2);
    assert_int_equal(cache_lends_of(&lends, 7), 4);
    assert_false(cache_lends_allow(&lends, 7, 1)); /* at its limit: copies */
    assert_true(cache_lends_allow(&lends, 8, 4));  /* another client still borrows */
    ended[ended_count++] = 3;                      /* control 11's lends ended ... */
    ended[ended_count++] = 4;                      /* ... without it coming back */
    assert_true(cache_lends_allow(&lends, 7, 1));  /* found lazily */
    assert_int_equal(cache_lends_of(&lends, 7), 2);
    free(lends.by_control);
}

static void test_a_returned_control_ends_its_lends(void **state)
{
    (void)state;
    struct cache_lends lends;
    ended_count = 0;
    assert_int_equal(cache_lends_init(&lends, 16, 4, lend_still_open, NULL), 0);
    uint64_t handles[4] = {1, 2, 3, 4};
    for (uint32_t round = 0; round < 1000;
         round++) { /* Bonnie: one control, lent again and again */
        cache_lends_returned(&lends, control_id(3, 20));
        assert_true(cache_lends_allow(&lends, 9, 1));
        cache_lends_record(&lends, control_id(3, 20), 9, &handles[round % 4], 1);
        assert_int_equal(cache_lends_of(&lends, 9), 1);
    }
    cache_lends_record(&lends, control_id(3, 20), 9, &handles[1],
                       1); /* lent again: the old ended */
    assert_int_equal(cache_lends_of(&lends, 9), 1);
    cache_lends_returned(&lends, control_id(4, 20)); /* another generation: not ours */
    assert_int_equal(cache_lends_of(&lends, 9), 1);
    cache_lends_returned(&lends, control_id(3, 20));
    assert_int_equal(cache_lends_of(&lends, 9), 0);
    assert_int_equal(lends.count, 0);
    free(lends.by_control);
}

static void test_lends_stop_at_the_total_limit(void **state)
{
    (void)state;
    struct cache_lends lends;
    ended_count = 0;
    assert_int_equal(cache_lends_init(&lends, 6, 4, lend_still_open, NULL), 0);
    uint64_t first[4] = {1, 2, 3, 4}, second[2] = {5, 6};
    cache_lends_record(&lends, control_id(1, 1), 1, first, 4);
    assert_true(cache_lends_allow(&lends, 2, 2));
    cache_lends_record(&lends, control_id(1, 2), 2, second, 2);
    assert_false(cache_lends_allow(&lends, 3, 1)); /* half the cache is lent */
    ended[ended_count++] = 5;
    ended[ended_count++] = 6;
    assert_true(cache_lends_allow(&lends, 3, 2));
    free(lends.by_control);
}

static void test_a_new_pid_does_not_inherit_an_ended_count(void **state)
{
    (void)state;
    struct cache_lends lends;
    ended_count = 0;
    assert_int_equal(cache_lends_init(&lends, 16, 4, lend_still_open, NULL), 0);
    uint64_t handles[4] = {1, 2, 3, 4};
    cache_lends_record(&lends, control_id(1, 5), 7, handles, 4);
    uint32_t next_in_slot = 7 + CACHE_LENDS_COUNTERS; /* a later pid in the ended one's slot */
    for (unsigned i = 0; i < 4; i++)
        ended[ended_count++] = handles[i];                   /* pid 7 ended: its lends did */
    assert_true(cache_lends_allow(&lends, next_in_slot, 4)); /* counted again, from zero */
    assert_int_equal(cache_lends_of(&lends, next_in_slot), 0);
    assert_int_equal(lends.count, 0);
    free(lends.by_control);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_miss_then_hit, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_block_stored_into_is_write_protected_before_write_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_freed_lent_block_has_its_mappings_ended, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sequential_miss_reads_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_gives_a_second_chance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writes_reach_the_disk_on_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_flushes_after_writing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evicted_dirty_blocks_are_written_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lent_block_is_never_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_freed_lent_block_keeps_its_old_bytes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_freed_lent_dirty_block_is_written_back_first, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_freed_blocks_nobody_borrows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retiring_every_lent_block, setup, teardown),
        cmocka_unit_test(test_retired_blocks_against_views),
        cmocka_unit_test_setup_teardown(test_bad_block_and_disk_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shard_refuses_blocks_of_other_shards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shard_read_ahead_stays_in_its_stripes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_heap_memory_when_no_allocator, setup, teardown),
        cmocka_unit_test(test_lends_stop_at_the_client_limit),
        cmocka_unit_test(test_a_returned_control_ends_its_lends),
        cmocka_unit_test(test_lends_stop_at_the_total_limit),
        cmocka_unit_test(test_a_new_pid_does_not_inherit_an_ended_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
