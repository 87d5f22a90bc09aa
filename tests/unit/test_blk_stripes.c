/* test_blk_stripes.c: BLK's routing (formica/blk_stripes.h, lib/blk_stripes.c):
 * which shard owns a block, how a run splits where a stripe ends, whether one
 * shard owns a block list, and a shard's next block after a stripe's end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <formica/blk_stripes.h>

static void test_shard_of_a_block(void **state)
{
    (void)state;
    assert_int_equal(blk_shard_of(0, 1), 0);
    assert_int_equal(blk_shard_of(123456789, 1), 0);
    assert_int_equal(blk_shard_of(63, 2), 0);
    assert_int_equal(blk_shard_of(64, 2), 1);
    assert_int_equal(blk_shard_of(127, 2), 1);
    assert_int_equal(blk_shard_of(128, 2), 0);
    assert_int_equal(blk_shard_of(3 * 64 + 5, 3), 0);
    assert_int_equal(blk_shard_of(5 * 64, 3), 2);
    assert_int_equal(blk_shard_of((1ull << 40) + 64, 2), 1);
    assert_int_equal(blk_shard_of(0, 0), 0); /* no placement: one shard */
}

/* Splits the run and checks its parts cover it exactly, in order. */
static uint32_t split(uint64_t first, uint32_t blocks, uint32_t shards, struct blk_run_part *parts,
                      uint32_t room)
{
    uint32_t count = 0;
    struct blk_run_part part;
    for (uint32_t done = 0; done < blocks; done += part.blocks) {
        part = blk_run_part(first, blocks, done, shards);
        assert_true(count < room);
        assert_int_equal(part.first, first + done);
        assert_int_equal(part.offset, done);
        assert_true(part.blocks >= 1 && part.blocks <= blocks - done);
        for (uint32_t i = 0; i < part.blocks; i++)
            assert_int_equal(blk_shard_of(part.first + i, shards), part.shard);
        parts[count++] = part;
    }
    return count;
}

static void test_run_in_one_stripe_is_one_part(void **state)
{
    (void)state;
    struct blk_run_part parts[8];
    assert_int_equal(split(64, 64, 2, parts, 8), 1);
    assert_int_equal(parts[0].blocks, 64);
    assert_int_equal(parts[0].shard, 1);
    assert_int_equal(split(60, 200, 1, parts, 8), 1); /* one shard: never split */
    assert_int_equal(parts[0].blocks, 200);
}

static void test_run_across_stripes_splits_at_each_end(void **state)
{
    (void)state;
    struct blk_run_part parts[8];
    assert_int_equal(split(60, 10, 2, parts, 8), 2);
    assert_int_equal(parts[0].first, 60);
    assert_int_equal(parts[0].blocks, 4);
    assert_int_equal(parts[0].shard, 0);
    assert_int_equal(parts[1].first, 64);
    assert_int_equal(parts[1].blocks, 6);
    assert_int_equal(parts[1].shard, 1);
    assert_int_equal(split(10, 256, 4, parts, 8), 5); /* 54 + 64 + 64 + 64 + 10 */
    assert_int_equal(parts[0].blocks, 54);
    assert_int_equal(parts[4].blocks, 10);
    assert_int_equal(parts[4].shard, 0);
    assert_int_equal(split(63, 2, 2, parts, 8), 2); /* one block each side */
    assert_int_equal(parts[0].blocks, 1);
    assert_int_equal(parts[1].blocks, 1);
}

static void test_block_list_in_one_shard_or_not(void **state)
{
    (void)state;
    uint32_t shard = 99;
    const uint32_t same[] = {64, 200, 70, 127};
    assert_true(blk_shard_of_list(same, 4, 2, &shard));
    assert_int_equal(shard, 1);
    const uint32_t mixed[] = {1, 2, 64};
    assert_false(blk_shard_of_list(mixed, 3, 2, &shard));
    assert_true(blk_shard_of_list(mixed, 3, 1, &shard));
    assert_int_equal(shard, 0);
    assert_true(blk_shard_of_list(mixed, 1, 2, &shard)); /* one block */
    assert_int_equal(shard, 0);
}

static void test_next_block_of_the_same_shard(void **state)
{
    (void)state;
    assert_int_equal(blk_shard_next_block(10, 1), 11);
    assert_int_equal(blk_shard_next_block(63, 1), 64);
    assert_int_equal(blk_shard_next_block(10, 2), 11);
    assert_int_equal(blk_shard_next_block(63, 2), 128);
    assert_int_equal(blk_shard_next_block(127, 2), 192);
    assert_int_equal(blk_shard_next_block(63, 4), 256);
    assert_int_equal(blk_shard_of(blk_shard_next_block(191, 3), 3), blk_shard_of(191, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_of_a_block),
        cmocka_unit_test(test_run_in_one_stripe_is_one_part),
        cmocka_unit_test(test_run_across_stripes_splits_at_each_end),
        cmocka_unit_test(test_block_list_in_one_shard_or_not),
        cmocka_unit_test(test_next_block_of_the_same_shard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
