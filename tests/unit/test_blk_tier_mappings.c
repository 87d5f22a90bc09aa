/* test_blk_tier_mappings.c: the NVM tier's CLOCK over lines lent into
 * mappings (servers/blk/tier_lines.c, docs/storage.md "The NVM tier"), with
 * the kernel's lend counts modelled per line's block ICA: when no line of a
 * set is free of lends, a clean one only mappings see has its mappings ended
 * (a full revoke, while it still holds its block) and is reused; a line
 * another lend holds is never taken; a dirty mapped line is taken only after
 * the pass a map asks for (its mappings write-protected, its stores on the
 * disk first); the second chance; read-ahead takes no mapped line; while a
 * set is all lent a miss asks about only a few lines; with every bound line
 * lent into mappings, a binding only mappings see is recycled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cache.h"
#include "memory_disk.h"
#include "tier.h"
#include <formica/errors.h>

#define DISK_BLOCKS 4096u
#define SETS 2u
#define WAYS TIER_MIN_WAYS
#define LINES (SETS * WAYS)
#define NVM_BYTES (TIER_HEADER_BYTES + 4096u + LINES * CACHE_BLOCK_BYTES)
/* A tier with more lines than can be bound at once: 33 sets of 64. */
#define MANY_SETS 33u
#define MANY_LINES (MANY_SETS * WAYS)
#define MANY_NVM_BYTES (TIER_HEADER_BYTES + 5u * 4096u + MANY_LINES * CACHE_BLOCK_BYTES)
#define HANDLE_BASE 5000u /* a line's block ICA: HANDLE_BASE + line */

static uint8_t disk_bytes[DISK_BLOCKS][CACHE_BLOCK_BYTES];
static struct memory_disk disk;
static uint8_t *nvm;
static struct tier tier;
static struct cache cache;

/* The kernel's view of each line's block ICA. */
static struct {
    uint32_t mappings; /* mapping lends: a full revoke ends them */
    uint32_t others;   /* every other lend (a request's, FS's borrowing) */
} lends[MANY_LINES];

/* The revocations asked for. */
static struct {
    uint32_t full, write_only;
    uint64_t last_full;         /* the handle of the last full revoke */
    uint64_t block_at_full;     /* the block the line's bytes were when it came */
    unsigned writes_at_full;    /* disk writes when it came */
    unsigned writes_at_protect; /* disk writes at the first write-protection */
} revoked;
static unsigned lend_asks; /* pinned() and held_beyond_mappings(): system calls in BLK */
static unsigned unbinds;

static uint32_t line_of_handle(uint64_t handle)
{
    assert_true(handle >= HANDLE_BASE && handle < HANDLE_BASE + tier.lines_count);
    return (uint32_t)(handle - HANDLE_BASE);
}

static bool pinned(void *context, uint64_t handle)
{
    (void)context;
    lend_asks++;
    if (handle < HANDLE_BASE)
        return false; /* the pool's blocks (handle 0) */
    uint32_t line = line_of_handle(handle);
    return lends[line].mappings + lends[line].others > 0;
}

static bool held_beyond_mappings(void *context, uint64_t handle)
{
    (void)context;
    lend_asks++;
    return handle >= HANDLE_BASE && lends[line_of_handle(handle)].others > 0;
}

static uint64_t block_in_line(uint32_t line)
{
    uint64_t word;
    memcpy(&word, tier_line_data(&tier, line), 8);
    return word >> 32;
}

/* SYS_ICA_REVOKE: a full revoke ends every mapping lend, and no other. */
static void revoke(void *context, uint64_t handle, bool write_only)
{
    (void)context;
    uint32_t line = line_of_handle(handle);
    if (write_only) {
        if (revoked.write_only++ == 0)
            revoked.writes_at_protect = disk.writes;
        return;
    }
    revoked.full++;
    revoked.last_full = handle;
    revoked.block_at_full = block_in_line(line);
    revoked.writes_at_full = disk.writes;
    lends[line].mappings = 0;
}

static int bind_own_page(void *context, uint8_t *data, uint64_t *handle)
{
    (void)context;
    *handle = HANDLE_BASE + (uint64_t)(data - tier.lines) / CACHE_BLOCK_BYTES;
    return 0;
}

static void unbind(void *context, uint64_t handle)
{
    (void)context;
    (void)handle;
    unbinds++;
}

/* Block b's bytes, version v: (b << 32 | v) in every word. */
static void fill_pattern(uint8_t *bytes, uint64_t block, uint64_t version)
{
    uint64_t word = block << 32 | version;
    for (size_t i = 0; i < CACHE_BLOCK_BYTES; i += 8)
        memcpy(bytes + i, &word, 8);
}

/* A fresh tier of `sets` sets over `bytes` of NVDIMM, its kernel modelled. */
static int setup_tier(uint32_t sets, uint64_t bytes)
{
    static uint8_t pool[4][CACHE_BLOCK_BYTES];
    memory_disk_reset(&disk, disk_bytes, DISK_BLOCKS);
    for (uint32_t block = 0; block < DISK_BLOCKS; block++)
        fill_pattern(disk_bytes[block], block, 0);
    lend_asks = 0;
    unbinds = 0;
    memset(lends, 0, sizeof lends);
    memset(&revoked, 0, sizeof revoked);
    nvm = aligned_alloc(4096, bytes);
    memset(nvm, 0, bytes);
    memset(&tier, 0, sizeof tier);
    struct cache_disk below = {&disk, DISK_BLOCKS, memory_disk_read, memory_disk_write, NULL};
    assert_int_equal(tier_prepare(&tier, nvm, bytes, sets, 1, &below, NULL), 0);
    for (int i = 0; i < 4; i++)
        tier_pool_add(&tier, pool[i], 0);
    assert_int_equal(cache_init_tier(&cache, &tier, &below), 0);
    tier_mount(&tier, &cache);
    assert_int_equal(tier.state, BLK_TIER_ATTACHED);
    assert_int_equal(tier.ways, WAYS);
    cache.memory = (struct cache_memory){.pinned = pinned,
                                         .revoke = revoke,
                                         .held_beyond_mappings = held_beyond_mappings,
                                         .bind = bind_own_page,
                                         .unbind = unbind};
    return 0;
}

static int setup(void **state)
{
    (void)state;
    return setup_tier(SETS, NVM_BYTES);
}

static int setup_many_lines(void **state)
{
    (void)state;
    return setup_tier(MANY_SETS, MANY_NVM_BYTES);
}

static int teardown(void **state)
{
    (void)state;
    cache_release(&cache);
    tier_release(&tier);
    free(nvm);
    return 0;
}

/* Block `number` lent (a fault's BLK_MAP), then mapped (writable: its
 * BLK_MAP_WRITABLE, which dirties the line): its handle. */
static uint64_t map_block(uint64_t number, bool writable)
{
    uint64_t handle = 0;
    assert_int_equal(cache_lend(&cache, number, &handle), 0);
    lends[line_of_handle(handle)].mappings++;
    if (writable)
        assert_int_equal(cache_lent_for_stores(&cache, number), 0);
    return handle;
}

/* Set 0 (blocks 0..63, one stripe) filled with mapped lines. */
static void map_set_zero(uint64_t *handles, bool writable)
{
    for (uint64_t block = 0; block < WAYS; block++)
        handles[block] = map_block(block, writable);
    for (uint64_t block = 0; block < WAYS; block++)
        assert_true(tier_set_of(&tier, block) == 0 && cache_lookup(&cache, block) != NULL);
}

static bool is_cached(uint64_t number)
{
    return cache_lookup(&cache, number) != NULL;
}

static uint64_t read_version(uint64_t number)
{
    uint8_t bytes[CACHE_BLOCK_BYTES];
    assert_int_equal(cache_read(&cache, number, bytes), 0);
    uint64_t word;
    memcpy(&word, bytes, 8);
    assert_int_equal(word >> 32, number);
    return word & 0xffffffffu;
}

/* The block whose handle is `handle` in `handles` (set 0's mapped blocks). */
static uint64_t block_of(const uint64_t *handles, uint64_t handle)
{
    for (uint64_t block = 0; block < WAYS; block++)
        if (handles[block] == handle)
            return block;
    fail_msg("handle %lu is none of set 0's", (unsigned long)handle);
    return 0;
}

/* Every line of set 0 mapped: a miss there (block 128, set 0) ends one
 * line's mappings while it still holds its block, and takes the line; the
 * mapper's next access faults the block back into another line. */
static void test_a_line_only_mappings_see_is_revoked_then_reused(void **state)
{
    (void)state;
    uint64_t handles[WAYS];
    map_set_zero(handles, false);
    assert_int_equal(read_version(128), 0);
    assert_int_equal(revoked.full, 1);
    assert_int_equal(revoked.write_only, 0);
    uint64_t evicted = block_of(handles, revoked.last_full);
    assert_int_equal(revoked.block_at_full, evicted); /* its mappings ended before the reuse */
    assert_false(is_cached(evicted));
    uint32_t line = line_of_handle(revoked.last_full);
    assert_ptr_equal(cache_lookup(&cache, 128), &cache.blocks[line]);
    assert_int_equal(block_in_line(line), 128);
    uint64_t block;
    enum tier_line_state line_state;
    assert_true(tier_tag_decode(line, tier.tags[line], &block, &line_state));
    assert_true(block == 128 && line_state == TIER_CLEAN);
    assert_int_equal(lends[line].mappings, 0);
    assert_int_equal(tier.mapped_takes, 1);
    assert_int_equal(tier.bypasses, 0);
    uint64_t taken = revoked.last_full;
    uint64_t again = map_block(evicted, false); /* faulted back: another line gives way */
    assert_true(again != taken && revoked.last_full == again);
    assert_int_equal(revoked.full, 2);
    assert_int_equal(read_version(evicted), 0);
}

/* A line FS borrowed (or a request holds) is kept even when mappings see it
 * too: with every line so held, a read bypasses the tier, nothing revoked. */
static void test_a_line_another_lend_holds_is_never_taken(void **state)
{
    (void)state;
    uint64_t handles[WAYS];
    map_set_zero(handles, false);
    for (uint32_t line = 0; line < LINES; line++)
        lends[line].others = 1;
    assert_int_equal(read_version(128), 0);
    assert_int_equal(tier.bypasses, 1);
    assert_int_equal(revoked.full, 0);
    assert_false(is_cached(128));
    lends[line_of_handle(handles[9])].others = 0; /* only mappings see block 9 now */
    assert_int_equal(read_version(128), 0);
    assert_int_equal(revoked.full, 1);
    assert_int_equal(revoked.last_full, handles[9]);
    assert_true(is_cached(128));
    assert_false(is_cached(9));
    for (uint64_t block = 0; block < WAYS; block++)
        assert_true(block == 9 || is_cached(block));
}

/* Every line of set 0 mapped writable and stored into: dirty lines are no
 * victims (their bytes go to the disk in a pass, in block order), so the
 * read bypasses; the pass a map then asks for write-protects the mappings
 * before writing, the stores reach the disk, and the next miss takes a
 * line (a full revoke after the write-back). */
static void test_dirty_mapped_lines_are_taken_after_a_pass(void **state)
{
    (void)state;
    uint64_t handles[WAYS];
    map_set_zero(handles, true);
    for (uint64_t block = 0; block < WAYS; block++) /* the process's stores */
        fill_pattern(tier_line_data(&tier, line_of_handle(handles[block])), block, 5);
    assert_int_equal(cache.stats.dirty, WAYS);
    uint64_t lineless = tier.lineless_misses;
    assert_int_equal(read_version(128), 0);
    assert_int_equal(tier.bypasses, 1);
    assert_int_equal(revoked.full, 0);
    assert_true(tier.lineless_misses > lineless);
    assert_true(tier_pass_for_map(&cache, lineless));
    assert_int_equal(revoked.write_only, WAYS);
    assert_int_equal(revoked.writes_at_protect, 0); /* protected before any write */
    assert_int_equal(disk.writes, 1);               /* one run of 64 */
    assert_int_equal(cache.stats.dirty, 0);
    for (uint64_t block = 0; block < WAYS; block++) {
        uint64_t word;
        memcpy(&word, disk_bytes[block] + 4088, 8);
        assert_int_equal(word, block << 32 | 5);
    }
    assert_false(tier_pass_for_map(&cache, tier.lineless_misses)); /* no miss since */
    uint64_t handle;
    assert_int_equal(cache_lend(&cache, 128, &handle), 0);
    assert_true(handle >= HANDLE_BASE);
    assert_int_equal(revoked.full, 1);
    assert_int_equal(revoked.writes_at_full, 1);
    assert_int_equal(read_version(block_of(handles, revoked.last_full)), 5);
}

/* A line faulted in again since the hand passed it (referenced) is passed
 * over once; an unreferenced one goes first. */
static void test_a_line_faulted_again_gets_its_second_chance(void **state)
{
    (void)state;
    uint64_t handles[WAYS];
    map_set_zero(handles, false);
    assert_int_equal(read_version(128), 0); /* this turn cleared every line's bit */
    uint64_t first = block_of(handles, revoked.last_full);
    uint32_t hand = tier.hands[0];
    uint64_t next = (uint64_t)-1; /* the mapped block the hand meets next */
    for (uint32_t step = 0; step < WAYS && next == (uint64_t)-1; step++) {
        struct cache_block *line = &cache.blocks[(hand + step) % WAYS];
        if (line->valid && line->number < WAYS)
            next = line->number;
    }
    assert_true(next != (uint64_t)-1 && next != first);
    uint64_t handle;
    assert_int_equal(cache_lend(&cache, next, &handle), 0); /* faulted again: referenced */
    assert_int_equal(read_version(256), 0);
    assert_int_equal(revoked.full, 2);
    assert_true(is_cached(next));
    assert_true(block_of(handles, revoked.last_full) != next);
}

/* Read-ahead takes only lines nobody borrows: with set 0 all mapped, a
 * sequential miss reads the block asked for (its own line revoked) and no
 * more. */
static void test_read_ahead_takes_no_mapped_line(void **state)
{
    (void)state;
    uint64_t handles[WAYS];
    map_set_zero(handles, false);
    uint64_t handle;
    assert_int_equal(cache_lend(&cache, 128, &handle), 0);
    lends[line_of_handle(handle)].mappings++;
    assert_int_equal(revoked.full, 1);
    assert_int_equal(cache_lend(&cache, 129, &handle), 0); /* sequential: read-ahead asked */
    lends[line_of_handle(handle)].mappings++;
    assert_int_equal(revoked.full, 2);
    assert_false(is_cached(130));
}

/* While a set is all mapped, a miss asks the kernel about a few lines (the
 * brief look, then the line it takes), not about every way. */
static void test_a_miss_in_a_mapped_set_asks_about_few_lines(void **state)
{
    (void)state;
    uint64_t handles[WAYS];
    map_set_zero(handles, false);
    assert_int_equal(read_version(128), 0); /* a whole turn: the set is all lent */
    uint64_t handle;
    assert_int_equal(cache_lend(&cache, 128, &handle), 0);
    lends[line_of_handle(handle)].mappings++;
    unsigned before = lend_asks;
    assert_int_equal(read_version(512), 0); /* stripe 8: set 0 */
    assert_int_equal(revoked.full, 2);
    assert_true(lend_asks - before <= 12);
}

/* Every one of the TIER_BOUND_MAX bound lines lent into mappings: a lend
 * of another line recycles the binding of one only mappings see (its
 * mappings ended, its stores flushed; the line stays cached and dirty)
 * rather than lending a DRAM copy. */
static void test_a_binding_only_mappings_see_is_recycled(void **state)
{
    (void)state;
    assert_true(tier.lines_count > TIER_BOUND_MAX);
    for (uint64_t block = 0; block < TIER_BOUND_MAX; block++)
        map_block(block, block == 0);
    assert_int_equal(tier.bound_count, TIER_BOUND_MAX);
    uint32_t first_line = tier.bound_lines[tier.bound_hand];
    assert_int_equal(cache.blocks[first_line].number, 0);
    assert_true(cache.blocks[first_line].stored_into);
    uint64_t handle;
    assert_int_equal(cache_lend(&cache, TIER_BOUND_MAX, &handle), 0); /* a free set's line */
    assert_int_equal(tier.lend_copies, 0);
    assert_int_equal(unbinds, 1);
    assert_int_equal(revoked.full, 1);
    assert_int_equal(revoked.last_full, HANDLE_BASE + first_line);
    assert_int_equal(lends[first_line].mappings, 0);
    struct cache_block *recycled = &cache.blocks[first_line];
    assert_false(recycled->bound);
    assert_false(recycled->stored_into);
    assert_true(recycled->valid && recycled->dirty); /* still block 0's line, dirty */
    assert_ptr_equal(cache_lookup(&cache, 0), recycled);
    assert_ptr_equal(cache_lookup(&cache, TIER_BOUND_MAX)->data,
                     tier_line_data(&tier, line_of_handle(handle)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_line_only_mappings_see_is_revoked_then_reused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_line_another_lend_holds_is_never_taken, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_dirty_mapped_lines_are_taken_after_a_pass, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_line_faulted_again_gets_its_second_chance, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_read_ahead_takes_no_mapped_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_miss_in_a_mapped_set_asks_about_few_lines, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_binding_only_mappings_see_is_recycled,
                                        setup_many_lines, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
