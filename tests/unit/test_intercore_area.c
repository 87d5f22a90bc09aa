/* test_intercore_area.c: the inter-core area's table and on-demand rings
 * (kernel/intercore_area.c): sizes per core count, connecting a pair gives
 * both directions once, bad pairs and failed allocations are errors that
 * change nothing, and a connected entry is a working ring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "intercore_area.h"

struct allocator {
    unsigned calls;
    unsigned fail_after; /* calls that succeed before every later one fails */
    void *blocks[64];
};

static void *allocate(void *context, size_t bytes)
{
    struct allocator *allocator = context;
    if (allocator->calls >= allocator->fail_after || allocator->calls == 64)
        return NULL;
    void *block = aligned_alloc(64, bytes);
    assert_non_null(block);
    memset(block, 0, bytes);
    allocator->blocks[allocator->calls++] = block;
    return block;
}

static void release(struct allocator *allocator)
{
    for (unsigned i = 0; i < allocator->calls; i++)
        free(allocator->blocks[i]);
}

static struct intercore_area *new_area(uint32_t cores)
{
    struct intercore_area *area = aligned_alloc(64, (intercore_area_bytes(cores) + 63) & ~63ul);
    assert_non_null(area);
    memset(area, 0xa5, intercore_area_bytes(cores)); /* init must not trust the contents */
    intercore_area_init(area, cores);
    return area;
}

static void test_slots_shrink_with_many_cores(void **state)
{
    (void)state;
    assert_int_equal(intercore_slots_for(1), 16);
    assert_int_equal(intercore_slots_for(32), 16);
    assert_int_equal(intercore_slots_for(33), 8);
    assert_int_equal(intercore_slots_for(128), 8);
    assert_int_equal(intercore_slots_for(129), 4);
    assert_int_equal(intercore_slots_for(256), 4);
}

static void test_table_size_and_empty_start(void **state)
{
    (void)state;
    struct intercore_area *area = new_area(256);
    assert_int_equal(intercore_area_bytes(256) - sizeof(struct intercore_area),
                     256 * 256 * sizeof(struct ring *));
    assert_int_equal(area->slots, 4);
    assert_int_equal(area->entry_bytes % 64, 0);
    assert_int_equal(area->pairs, 0);
    assert_int_equal(intercore_area_memory(area), intercore_area_bytes(256));
    for (uint32_t from = 0; from < 256; from += 17)
        for (uint32_t to = 0; to < 256; to += 13)
            assert_null(intercore_entry(area, from, to));
    free(area);
}

static void test_connect_gives_both_directions_once(void **state)
{
    (void)state;
    struct allocator allocator = {.fail_after = 64};
    struct intercore_area *area = new_area(8);
    assert_int_equal(intercore_area_connect(area, 2, 5, allocate, &allocator), 0);
    struct ring *forward = intercore_entry(area, 2, 5), *backward = intercore_entry(area, 5, 2);
    assert_non_null(forward);
    assert_non_null(backward);
    assert_ptr_not_equal(forward, backward);
    assert_null(intercore_entry(area, 2, 4));
    assert_int_equal(area->pairs, 2);
    assert_int_equal(intercore_area_connect(area, 5, 2, allocate, &allocator), 0);
    assert_int_equal(allocator.calls, 2);
    assert_ptr_equal(intercore_entry(area, 2, 5), forward);
    assert_int_equal(intercore_area_memory(area), intercore_area_bytes(8) + 2 * area->entry_bytes);
    release(&allocator);
    free(area);
}

static void test_connected_entry_is_a_ring_of_the_area_slots(void **state)
{
    (void)state;
    struct allocator allocator = {.fail_after = 64};
    struct intercore_area *area = new_area(64);
    assert_int_equal(intercore_area_connect(area, 0, 63, allocate, &allocator), 0);
    struct ring *entry = intercore_entry(area, 0, 63);
    uint8_t message[INTERCORE_MESSAGE_BYTES] = {7}, out[INTERCORE_MESSAGE_BYTES];
    unsigned pushed = 0;
    while (ring_push(entry, message))
        pushed++;
    assert_int_equal(pushed, 8);
    assert_true(ring_pop(entry, out));
    assert_int_equal(out[0], 7);
    release(&allocator);
    free(area);
}

static void test_bad_pairs_are_refused(void **state)
{
    (void)state;
    struct allocator allocator = {.fail_after = 64};
    struct intercore_area *area = new_area(4);
    assert_int_equal(intercore_area_connect(area, 1, 1, allocate, &allocator), -1);
    assert_int_equal(intercore_area_connect(area, 4, 1, allocate, &allocator), -1);
    assert_int_equal(intercore_area_connect(area, 0, 4, allocate, &allocator), -1);
    assert_int_equal(allocator.calls, 0);
    assert_int_equal(area->pairs, 0);
    free(area);
}

static void test_failed_allocation_is_an_error(void **state)
{
    (void)state;
    struct allocator allocator = {.fail_after = 1};
    struct intercore_area *area = new_area(4);
    assert_int_equal(intercore_area_connect(area, 1, 3, allocate, &allocator), -1);
    assert_non_null(intercore_entry(area, 1, 3)); /* the first direction was published */
    assert_null(intercore_entry(area, 3, 1));
    allocator.fail_after = 64;
    assert_int_equal(intercore_area_connect(area, 1, 3, allocate, &allocator), 0);
    assert_non_null(intercore_entry(area, 3, 1));
    assert_int_equal(area->pairs, 2);
    release(&allocator);
    free(area);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots_shrink_with_many_cores),
        cmocka_unit_test(test_table_size_and_empty_start),
        cmocka_unit_test(test_connect_gives_both_directions_once),
        cmocka_unit_test(test_connected_entry_is_a_ring_of_the_area_slots),
        cmocka_unit_test(test_bad_pairs_are_refused),
        cmocka_unit_test(test_failed_allocation_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
