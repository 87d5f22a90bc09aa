/* test_blk_clock_mappings.c: BLK's CLOCK over blocks lent into mappings
 * (servers/blk/cache_clock.c, docs/mmap.md "Mapping lends"), with the
 * kernel's lend counts modelled per block ICA: when every block is lent,
 * one only mappings see is revoked (a full revoke) and evicted, a dirty one
 * written back after its revocation; a block another lend holds is never
 * taken, an unlent block goes first, a block faulted in since the hand
 * passed gets its second chance, one still lent after the revoke is kept;
 * while every block is lent a miss asks about only a few. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cache.h"
#include "memory_disk.h"
#include <formica/errors.h>

#define DISK_BLOCKS 256u
#define CAPACITY 32u
#define HANDLES (CAPACITY + 1)

static uint8_t disk_bytes[DISK_BLOCKS][CACHE_BLOCK_BYTES];
static struct memory_disk disk;
static struct cache cache;

/* The kernel's view of each block ICA (handles 1..CAPACITY). */
static struct {
    uint32_t mappings; /* mapping lends: a full revoke ends them */
    uint32_t others;   /* every other lend (a request's, FS's borrowing) */
    /* A lend the kernel counts that the check missed (read while the counts
     * changed: a mapping installed from an answer as its own lend ends). */
    uint32_t arriving;
} lends[HANDLES];

/* The revocations asked for, in order. */
static struct {
    uint32_t count, full;
    uint64_t handles[16];
    bool write_only[16];
    uint32_t writes_at_full; /* disk writes when the last full revoke came */
} revoked;
static int handle_counter;
static int allocate(void *context, uint8_t **data, uint64_t *handle)
{
    (void)context;
    *data = calloc(1, CACHE_BLOCK_BYTES);
    *handle = (uint64_t)++handle_counter;
    return *data != NULL ? 0 : -E_NO_MEMORY;
}

static uint32_t lend_checks; /* pinned() calls: each is a system call in BLK */
static bool pinned(void *context, uint64_t handle)
{
    (void)context;
    lend_checks++;
    return lends[handle].mappings + lends[handle].others + lends[handle].arriving > 0;
}

static bool held_beyond_mappings(void *context, uint64_t handle)
{
    (void)context;
    return lends[handle].others > 0;
}

/* SYS_ICA_REVOKE as the kernel does it: a full revoke ends every mapping
 * lend, and no other. */
static void revoke(void *context, uint64_t handle, bool write_only)
{
    (void)context;
    if (revoked.count < 16) {
        revoked.handles[revoked.count] = handle;
        revoked.write_only[revoked.count] = write_only;
    }
    revoked.count++;
    if (!write_only) {
        lends[handle].mappings = 0;
        revoked.full++;
        revoked.writes_at_full = disk.writes;
    }
}

static int setup(void **state)
{
    (void)state;
    memory_disk_reset(&disk, disk_bytes, DISK_BLOCKS);
    for (uint32_t block = 0; block < DISK_BLOCKS; block++)
        memset(disk_bytes[block], (int)block, CACHE_BLOCK_BYTES);
    memset(lends, 0, sizeof lends);
    memset(&revoked, 0, sizeof revoked);
    lend_checks = 0;
    handle_counter = 0;
    struct cache_disk below = {&disk, DISK_BLOCKS, memory_disk_read, memory_disk_write, NULL};
    struct cache_memory memory = {.allocate = allocate,
                                  .pinned = pinned,
                                  .revoke = revoke,
                                  .held_beyond_mappings = held_beyond_mappings};
    return cache_init(&cache, CAPACITY, &below, &memory);
}

static int teardown(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < cache.capacity; i++)
        free(cache.blocks[i].data);
    free(cache.blocks);
    free(cache.buckets);
    return 0;
}

/* Block `number` lent (a fault's BLK_MAP), then mapped: its handle. */
static uint64_t map_block(uint64_t number)
{
    uint64_t handle = 0;
    assert_int_equal(cache_lend(&cache, number, &handle), 0);
    assert_true(handle != 0 && handle < HANDLES);
    lends[handle].mappings++;
    return handle;
}

/* Every slot holds a mapped block: 2 * i for slot order i (no read-ahead). */
static void map_every_slot(uint64_t *handles)
{
    for (uint32_t i = 0; i < CAPACITY; i++)
        handles[i] = map_block(2 * i);
}

static bool is_cached(uint64_t number)
{
    struct cache_block *block = cache_lookup(&cache, number);
    return block != NULL && block->valid;
}

static int read_block(uint64_t number)
{
    uint8_t buffer[CACHE_BLOCK_BYTES];
    int error = cache_read(&cache, number, buffer);
    if (error == 0)
        assert_int_equal(buffer[17], (uint8_t)number);
    return error;
}

/* Every block mapped: a miss ends one block's mappings (fully) and takes
 * its slot; the mapper's next access faults it back in. */
static void test_a_block_only_mappings_see_is_revoked_and_evicted(void **state)
{
    (void)state;
    uint64_t handles[CAPACITY];
    map_every_slot(handles);
    assert_int_equal(read_block(101), 0);
    assert_int_equal(revoked.count, 1);
    assert_false(revoked.write_only[0]);
    assert_int_equal(revoked.handles[0], handles[0]); /* bits cleared, the hand's first */
    assert_false(is_cached(0));
    assert_true(is_cached(101));
    assert_int_equal(lends[handles[0]].mappings, 0);
    assert_int_equal(cache_lend_missing(&cache, 0, &handles[0]), 0); /* faulted back */
    assert_true(is_cached(0));
}

/* A block FS borrowed (or a request holds) is kept even when mappings see
 * it too; with every block so held, a miss is -E_BUSY and nothing revoked. */
static void test_a_block_another_lend_holds_is_never_taken(void **state)
{
    (void)state;
    uint64_t handles[CAPACITY];
    map_every_slot(handles);
    for (uint32_t i = 0; i < CAPACITY; i++)
        lends[handles[i]].others = 1;
    assert_int_equal(read_block(101), -E_BUSY);
    assert_int_equal(revoked.count, 0);
    lends[handles[5]].others = 0; /* only mappings see block 10 now */
    assert_int_equal(read_block(101), 0);
    assert_int_equal(revoked.count, 1);
    assert_int_equal(revoked.handles[0], handles[5]);
    assert_false(is_cached(10));
    for (uint32_t i = 0; i < CAPACITY; i++)
        if (i != 5)
            assert_true(is_cached(2 * i));
}

/* With one unlent block left (referenced, just read), it is the victim:
 * no mapping is revoked while an unlent block is there. */
static void test_an_unlent_block_goes_before_a_mapped_one(void **state)
{
    (void)state;
    uint64_t handles[CAPACITY];
    map_every_slot(handles);
    lends[handles[20]].mappings = 0; /* block 40: unmapped since, and used once more */
    assert_int_equal(read_block(40), 0);
    assert_int_equal(read_block(101), 0);
    assert_int_equal(revoked.count, 0);
    assert_false(is_cached(40));
    for (uint32_t i = 0; i < CAPACITY; i++)
        if (i != 20)
            assert_true(is_cached(2 * i));
}

/* Second chance among mapped blocks: a block faulted in again since the
 * hand cleared its bit is passed over; the next unreferenced one goes. */
static void test_a_recently_faulted_mapping_gets_a_second_chance(void **state)
{
    (void)state;
    uint64_t handles[CAPACITY];
    map_every_slot(handles);
    assert_int_equal(read_block(101), 0); /* slot 0's block 0 goes, every bit cleared */
    uint64_t again = 0;
    assert_int_equal(cache_lend(&cache, 2, &again), 0); /* block 2 (slot 1) faulted again */
    assert_int_equal(again, handles[1]);
    lends[handles[0]].mappings = 1; /* block 101 in slot 0 is mapped too */
    assert_int_equal(read_block(103), 0);
    assert_int_equal(revoked.count, 2);
    assert_int_equal(revoked.handles[1], handles[2]); /* block 4, not block 2 */
    assert_true(is_cached(2));
    assert_false(is_cached(4));
}

/* A dirty mapped block (stored into through a writable mapping) has its
 * mappings ended first, then is written back: no store lands after its
 * write-back, and the store is on the disk. */
static void test_a_dirty_mapped_block_is_revoked_then_written_back(void **state)
{
    (void)state;
    uint64_t handles[CAPACITY];
    map_every_slot(handles);
    assert_int_equal(read_block(101), 0); /* every bit cleared; slot 0 holds block 101 */
    lends[handles[0]].mappings = 1;
    assert_int_equal(cache_lent_for_stores(&cache, 2), 0); /* block 2 lent writable */
    cache.blocks[1].data[9] = 0x77;                        /* the mapper's store, in place */
    assert_int_equal(read_block(103), 0);
    assert_false(is_cached(2));
    assert_int_equal(disk_bytes[2][9], 0x77);
    assert_int_equal(revoked.full, 2);
    assert_int_equal(revoked.handles[1], handles[1]);
    assert_false(revoked.write_only[1]);
    assert_int_equal(revoked.writes_at_full, 0); /* ended before the write-back */
    assert_int_equal(disk.writes, 1);
}

/* A block the check saw only mappings hold, but that is still lent after
 * their revocation (a lend the racing check missed), is not evicted; once
 * nothing holds it, it is an unlent block like any. */
static void test_a_block_still_lent_after_the_revoke_is_kept(void **state)
{
    (void)state;
    uint64_t handles[CAPACITY];
    map_every_slot(handles);
    for (uint32_t i = 0; i < CAPACITY; i++)
        lends[handles[i]].others = 1;
    lends[handles[3]].others = 0;
    lends[handles[3]].arriving = 1;
    assert_int_equal(read_block(101), -E_BUSY);
    assert_int_equal(revoked.full, 1);
    assert_int_equal(revoked.handles[0], handles[3]);
    assert_true(is_cached(6));
    lends[handles[3]].arriving = 0;
    assert_int_equal(read_block(101), 0);
    assert_false(is_cached(6));
    assert_int_equal(revoked.full, 1);
}

/* Once a miss found every block lent, the next misses ask about only a few
 * blocks before taking a mapped one (not one system call per block of the
 * cache at every fault); a block let go near the hand is still found first,
 * and one let go far from it once nothing can be revoked. */
static void test_while_every_block_is_lent_a_miss_looks_briefly(void **state)
{
    (void)state;
    uint64_t handles[CAPACITY];
    map_every_slot(handles);
    assert_int_equal(read_block(101), 0); /* a whole turn, then slot 0's mapped block */
    for (uint64_t number = 103; number < 103 + 2 * 8; number += 2) {
        lend_checks = 0;
        assert_int_equal(read_block(number), 0);
        assert_true(lend_checks <= 8 + 2);
    }
    uint32_t near = (cache.hand + 1) % CAPACITY;
    uint64_t kept = cache.blocks[near].number;
    lends[cache.blocks[near].handle].mappings = 0; /* let go, just past the hand */
    uint32_t revokes = revoked.full;
    assert_int_equal(read_block(201), 0);
    assert_int_equal(revoked.full, revokes); /* the unlent block went, nothing revoked */
    assert_false(is_cached(kept));
    for (uint32_t i = 0; i < CAPACITY; i++)
        if (cache.blocks[i].valid && cache.blocks[i].handle != 0)
            lends[cache.blocks[i].handle].others = 1; /* held: nothing can be revoked */
    uint32_t far = (cache.hand + CAPACITY / 2) % CAPACITY;
    kept = cache.blocks[far].number;
    lends[cache.blocks[far].handle].others = 0;
    lends[cache.blocks[far].handle].mappings = 0;
    assert_int_equal(read_block(203), 0); /* found by the whole turn after the brief look */
    assert_false(is_cached(kept));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_block_only_mappings_see_is_revoked_and_evicted,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_block_another_lend_holds_is_never_taken, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_unlent_block_goes_before_a_mapped_one, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_recently_faulted_mapping_gets_a_second_chance, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_dirty_mapped_block_is_revoked_then_written_back,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_block_still_lent_after_the_revoke_is_kept, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_while_every_block_is_lent_a_miss_looks_briefly, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
