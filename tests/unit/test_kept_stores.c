/* test_kept_stores.c: the pager's stores in flight kept across its restart
 * (servers/pager/kept_stores.c): a block of any size up to 1 MiB in
 * consecutive slots, room refused when full or too fragmented, bytes copied
 * back only whole (record finished, size and checksum agree), freed at the
 * acknowledgement or when the client ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kept_stores.h"
#include <formica/kept_region.h>

#define BLOCK_16K (16u << 10)
#define BLOCK_1M (1u << 20)

static uint8_t *pattern(uint32_t bytes, uint8_t seed)
{
    uint8_t *data = malloc(bytes);
    for (uint32_t i = 0; i < bytes; i++)
        data[i] = (uint8_t)(i * 31 + seed);
    return data;
}

/* A fresh area, as the kept region gives it (zeroed). */
static struct kept_stores *fresh(void)
{
    return calloc(1, sizeof(struct kept_stores));
}

static bool keep(struct kept_stores *stores, uint32_t pid, uint32_t block, const uint8_t *data,
                 uint32_t bytes)
{
    return kept_stores_keep(stores, pid, block, data, bytes, kept_checksum(data, bytes));
}

static void test_small_blocks_fill_every_slot(void **state)
{
    (void)state;
    struct kept_stores *stores = fresh();
    uint8_t *data = pattern(BLOCK_16K, 1), *back = malloc(BLOCK_16K);
    for (uint32_t block = 0; block < KEPT_STORE_SLOTS; block++)
        assert_true(keep(stores, 7, block, data, BLOCK_16K));
    assert_false(kept_stores_have_room(stores, BLOCK_16K)); /* a 17th waits */
    assert_false(keep(stores, 7, 99, data, BLOCK_16K));
    kept_stores_end(stores, 7, 3); /* acknowledged: its slot is free again */
    assert_false(kept_stores_copy_back(stores, 7, 3, back, BLOCK_16K));
    assert_true(keep(stores, 7, 99, data, BLOCK_16K));
    assert_true(kept_stores_copy_back(stores, 7, 99, back, BLOCK_16K));
    assert_memory_equal(back, data, BLOCK_16K);
    free(data), free(back), free(stores);
}

static void test_a_1_mib_block_takes_all_slots(void **state)
{
    (void)state;
    struct kept_stores *stores = fresh();
    uint8_t *big = pattern(BLOCK_1M, 2), *back = malloc(BLOCK_1M), *small = pattern(BLOCK_16K, 3);
    assert_true(keep(stores, 8, 5, small, BLOCK_16K));
    assert_false(kept_stores_have_room(stores, BLOCK_1M)); /* one slot taken */
    kept_stores_end(stores, 8, 5);
    assert_true(keep(stores, 8, 6, big, BLOCK_1M));
    assert_false(kept_stores_have_room(stores, BLOCK_16K));
    assert_true(kept_stores_copy_back(stores, 8, 6, back, BLOCK_1M));
    assert_memory_equal(back, big, BLOCK_1M);
    assert_false(kept_stores_copy_back(stores, 8, 6, back, BLOCK_16K)); /* another size */
    kept_stores_end(stores, 8, 6); /* every part freed with the record */
    for (uint32_t block = 0; block < KEPT_STORE_SLOTS; block++)
        assert_true(keep(stores, 8, block, small, BLOCK_16K));
    assert_false(kept_stores_have_room(stores, 2 * BLOCK_1M)); /* larger than the area */
    free(big), free(back), free(small), free(stores);
}

static void test_room_needs_consecutive_slots(void **state)
{
    (void)state;
    struct kept_stores *stores = fresh();
    uint8_t *small = pattern(KEPT_STORE_SLOT_BYTES, 4);
    uint8_t *pair = pattern(2 * KEPT_STORE_SLOT_BYTES, 5),
            *back = malloc(2 * KEPT_STORE_SLOT_BYTES);
    for (uint32_t block = 0; block < KEPT_STORE_SLOTS; block++)
        assert_true(keep(stores, 9, block, small, KEPT_STORE_SLOT_BYTES));
    for (uint32_t block = 0; block < KEPT_STORE_SLOTS; block += 2)
        kept_stores_end(stores, 9, block); /* every other slot free */
    assert_true(kept_stores_have_room(stores, KEPT_STORE_SLOT_BYTES));
    assert_false(kept_stores_have_room(stores, 2 * KEPT_STORE_SLOT_BYTES));
    kept_stores_end(stores, 9, 1); /* slots 0-2 free together */
    assert_true(keep(stores, 9, 40, pair, 2 * KEPT_STORE_SLOT_BYTES));
    assert_true(kept_stores_copy_back(stores, 9, 40, back, 2 * KEPT_STORE_SLOT_BYTES));
    assert_memory_equal(back, pair, 2 * KEPT_STORE_SLOT_BYTES);
    free(small), free(pair), free(back), free(stores);
}

/* What a restarted pager finds: only whole records count. */
static void test_torn_or_damaged_stores_are_not_given_back(void **state)
{
    (void)state;
    struct kept_stores *stores = fresh();
    uint8_t *data = pattern(BLOCK_16K, 6), *back = malloc(BLOCK_16K);
    assert_true(keep(stores, 10, 1, data, BLOCK_16K));
    assert_true(keep(stores, 10, 2, data, BLOCK_16K));
    stores->slots[0].finished = 0; /* the pager ended before the record's marker */
    assert_false(kept_stores_copy_back(stores, 10, 1, back, BLOCK_16K));
    stores->bytes[1][100] ^= 0xff; /* its bytes changed after the checksum */
    assert_false(kept_stores_copy_back(stores, 10, 2, back, BLOCK_16K));
    assert_false(kept_stores_copy_back(stores, 11, 2, back, BLOCK_16K)); /* another pid's */
    free(data), free(back), free(stores);
}

static void test_an_ended_client_frees_its_slots(void **state)
{
    (void)state;
    struct kept_stores *stores = fresh();
    uint8_t *data = pattern(4 * KEPT_STORE_SLOT_BYTES, 7), *back = malloc(KEPT_STORE_SLOT_BYTES);
    assert_true(keep(stores, 12, 0, data, 4 * KEPT_STORE_SLOT_BYTES));
    assert_true(keep(stores, 13, 0, data, KEPT_STORE_SLOT_BYTES));
    kept_stores_drop(stores, 12);
    assert_true(kept_stores_copy_back(stores, 13, 0, back, KEPT_STORE_SLOT_BYTES));
    for (uint32_t block = 1; block < KEPT_STORE_SLOTS; block++)
        assert_true(keep(stores, 14, block, data, KEPT_STORE_SLOT_BYTES));
    free(data), free(back), free(stores);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_blocks_fill_every_slot),
        cmocka_unit_test(test_a_1_mib_block_takes_all_slots),
        cmocka_unit_test(test_room_needs_consecutive_slots),
        cmocka_unit_test(test_torn_or_damaged_stores_are_not_given_back),
        cmocka_unit_test(test_an_ended_client_frees_its_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
