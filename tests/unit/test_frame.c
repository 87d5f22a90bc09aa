/* test_frame.c: host unit tests of mkernel/frame.c, the bitmap physical frame
 * allocator: init, release/reserve ranges, single and contiguous aligned
 * allocation, limits, free/reuse, refused frees, free_count accounting. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "frame.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)

/* An allocator with its own heap bitmap, all frames in use. */
static struct frame_allocator *make_allocator(uint64_t frame_count)
{
    struct frame_allocator *allocator = malloc(sizeof(*allocator));
    assert_non_null(allocator);
    uint64_t bytes = frame_bitmap_bytes(frame_count);
    uint64_t *bitmap = malloc(bytes > 0 ? bytes : 8);
    assert_non_null(bitmap);
    frame_allocator_init(allocator, bitmap, frame_count);
    return allocator;
}

static void destroy_allocator(struct frame_allocator *allocator)
{
    free(allocator->bitmap);
    free(allocator);
}

/* The accounting invariant: free_count is exactly the number of clear bits
 * among the covered frames, and bits past frame_count stay set (in use). */
static void check_accounting(const struct frame_allocator *allocator)
{
    uint64_t clear = 0;
    for (uint64_t frame = 0; frame < allocator->frame_count; frame++)
        if (((allocator->bitmap[frame / 64] >> (frame % 64)) & 1) == 0)
            clear++;
    assert_int_equal(clear, allocator->free_count);
    uint64_t words = frame_bitmap_bytes(allocator->frame_count) / 8;
    for (uint64_t frame = allocator->frame_count; frame < words * 64; frame++)
        assert_true((allocator->bitmap[frame / 64] >> (frame % 64)) & 1);
}

static void assert_frames_free(const struct frame_allocator *allocator, uint64_t first,
                               uint64_t count, bool expected)
{
    for (uint64_t frame = first; frame < first + count; frame++)
        assert_int_equal(frame_is_free(allocator, frame * FRAME_SIZE), expected);
}

static void test_bitmap_bytes(void **state)
{
    (void)state;
    assert_int_equal(frame_bitmap_bytes(0), 0);
    assert_int_equal(frame_bitmap_bytes(1), 8);
    assert_int_equal(frame_bitmap_bytes(64), 8);
    assert_int_equal(frame_bitmap_bytes(65), 16);
    assert_int_equal(frame_bitmap_bytes(4 * GIB / FRAME_SIZE), 128 * KIB);
}

static void test_init_all_used(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(100);
    assert_int_equal(allocator->free_count, 0);
    assert_frames_free(allocator, 0, 100, false);
    assert_false(frame_is_free(allocator, 100 * FRAME_SIZE));
    assert_int_equal(frame_allocate(allocator, 1, 1, 0), FRAME_NONE);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_release_aligned_range(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(100);
    frame_release_range(allocator, 0x1000, 0x3000);
    assert_int_equal(allocator->free_count, 3);
    assert_false(frame_is_free(allocator, 0x0));
    assert_frames_free(allocator, 1, 3, true);
    assert_false(frame_is_free(allocator, 0x4000));
    /* Any address inside a frame names that frame. */
    assert_true(frame_is_free(allocator, 0x1fff));
    /* Releasing again changes nothing. */
    frame_release_range(allocator, 0x1000, 0x2000);
    assert_int_equal(allocator->free_count, 3);
    frame_release_range(allocator, 0x5000, 0);
    assert_int_equal(allocator->free_count, 3);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_release_partial_edges_stay_used(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(200);
    frame_release_range(allocator, 0x1800, 0x2000); /* [0x1800, 0x3800): only frame 2 whole */
    assert_int_equal(allocator->free_count, 1);
    assert_false(frame_is_free(allocator, 0x1000));
    assert_true(frame_is_free(allocator, 0x2000));
    assert_false(frame_is_free(allocator, 0x3000));
    frame_release_range(allocator, 0x10001, 0xfff);  /* within one frame: nothing */
    frame_release_range(allocator, 0x20800, 0x1000); /* straddles two frames: nothing */
    assert_int_equal(allocator->free_count, 1);
    /* The SeaBIOS low-memory end at 0x9fc00 loses its last partial frame. */
    frame_release_range(allocator, 0x0, 0x9fc00 - 0x0);
    assert_frames_free(allocator, 0, 0x9f, true);
    assert_false(frame_is_free(allocator, 0x9f000));
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_release_out_of_range_ignored(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(100);
    frame_release_range(allocator, 90 * FRAME_SIZE, 1 * GIB);
    assert_int_equal(allocator->free_count, 10);
    frame_release_range(allocator, 200 * FRAME_SIZE, 10 * FRAME_SIZE);
    assert_int_equal(allocator->free_count, 10);
    /* A length wrapping past 2^64 releases up to the end of the bitmap. */
    frame_release_range(allocator, 50 * FRAME_SIZE, UINT64_MAX);
    assert_int_equal(allocator->free_count, 50);
    /* A base in the very last frame of the address space: rounding it up
     * must not wrap to frame 0 and release everything. */
    struct frame_allocator *fresh = make_allocator(100);
    frame_release_range(fresh, UINT64_MAX - 10, 100);
    assert_int_equal(fresh->free_count, 0);
    frame_release_range(fresh, UINT64_MAX - FRAME_SIZE, UINT64_MAX);
    assert_int_equal(fresh->free_count, 0);
    check_accounting(fresh);
    destroy_allocator(fresh);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_reserve_range_takes_partial_frames(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(100);
    frame_release_range(allocator, 0, 100 * FRAME_SIZE);
    assert_int_equal(allocator->free_count, 100);
    frame_reserve_range(allocator, 0x1800, 0x1000); /* touches frames 1 and 2 */
    assert_int_equal(allocator->free_count, 98);
    assert_true(frame_is_free(allocator, 0x0));
    assert_frames_free(allocator, 1, 2, false);
    assert_true(frame_is_free(allocator, 0x3000));
    frame_reserve_range(allocator, 0x5000, 0); /* empty: nothing */
    assert_int_equal(allocator->free_count, 98);
    frame_reserve_range(allocator, 0x5000, 1); /* one byte: the whole frame */
    assert_false(frame_is_free(allocator, 0x5000));
    assert_int_equal(allocator->free_count, 97);
    frame_reserve_range(allocator, 0x1000, 0x2000); /* already reserved: no double count */
    assert_int_equal(allocator->free_count, 97);
    frame_reserve_range(allocator, 95 * FRAME_SIZE, UINT64_MAX); /* wraps: to the end */
    assert_int_equal(allocator->free_count, 92);
    frame_reserve_range(allocator, 500 * FRAME_SIZE, FRAME_SIZE); /* out of range */
    assert_int_equal(allocator->free_count, 92);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_single_frames_until_exhaustion(void **state)
{
    (void)state;
    const uint64_t frame_count = 300; /* not a multiple of 64 */
    struct frame_allocator *allocator = make_allocator(frame_count);
    frame_release_range(allocator, 0x1000, 0x9e000);                            /* frames 1..0x9e */
    frame_release_range(allocator, 0xc0000, (frame_count - 0xc0) * FRAME_SIZE); /* to the end */
    frame_reserve_range(allocator, 0x20000, 0x3000);
    uint64_t expected = allocator->free_count;
    bool *seen = calloc(frame_count, sizeof(bool));
    assert_non_null(seen);
    for (uint64_t i = 0; i < expected; i++) {
        uint64_t physical = frame_allocate(allocator, 1, 1, 0);
        assert_int_not_equal(physical, FRAME_NONE);
        assert_int_equal(physical % FRAME_SIZE, 0);
        uint64_t frame = physical / FRAME_SIZE;
        assert_true(frame < frame_count);
        assert_false(seen[frame]);
        assert_false(frame_is_free(allocator, physical));
        assert_true(frame != 0 && (frame < 0x20 || frame >= 0x23));
        assert_true(frame < 0x9f || frame >= 0xc0);
        seen[frame] = true;
        assert_int_equal(allocator->free_count, expected - i - 1);
    }
    assert_int_equal(allocator->free_count, 0);
    assert_int_equal(frame_allocate(allocator, 1, 1, 0), FRAME_NONE);
    assert_int_equal(allocator->free_count, 0);
    check_accounting(allocator);
    free(seen);
    destroy_allocator(allocator);
}

static void test_contiguous_aligned(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(256);
    frame_release_range(allocator, 3 * FRAME_SIZE, 200 * FRAME_SIZE); /* frames 3..202 */
    frame_reserve_range(allocator, 20 * FRAME_SIZE, FRAME_SIZE);      /* hole at 20 */
    uint64_t physical = frame_allocate(allocator, 16, 16, 0);
    assert_int_equal(physical, 32 * FRAME_SIZE); /* 16..31 has the hole at 20 */
    assert_frames_free(allocator, 32, 16, false);
    uint64_t second = frame_allocate(allocator, 16, 16, 0);
    assert_int_equal(second, 48 * FRAME_SIZE);
    /* Unaligned runs may start anywhere free. */
    uint64_t run = frame_allocate(allocator, 5, 1, 0);
    assert_int_not_equal(run, FRAME_NONE);
    assert_frames_free(allocator, run / FRAME_SIZE, 5, false);
    /* Alignment larger than a bitmap word. */
    uint64_t big = frame_allocate(allocator, 1, 128, 0);
    assert_int_equal(big, 128 * FRAME_SIZE);
    /* A run longer than any free stretch fails and changes nothing. */
    uint64_t before = allocator->free_count;
    assert_int_equal(frame_allocate(allocator, 150, 1, 0), FRAME_NONE);
    assert_int_equal(allocator->free_count, before);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(64);
    frame_release_range(allocator, 0, 64 * FRAME_SIZE);
    assert_int_equal(frame_allocate(allocator, 0, 1, 0), FRAME_NONE);
    assert_int_equal(frame_allocate(allocator, 1, 0, 0), FRAME_NONE);
    assert_int_equal(frame_allocate(allocator, 1, 3, 0), FRAME_NONE);
    assert_int_equal(frame_allocate(allocator, 1, 12, 0), FRAME_NONE);
    assert_int_equal(frame_allocate(allocator, 65, 1, 0), FRAME_NONE);
    assert_int_equal(allocator->free_count, 64);
    assert_int_equal(frame_allocate(allocator, 64, 64, 0), 0);
    assert_int_equal(allocator->free_count, 0);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_limit_below_4g(void **state)
{
    (void)state;
    const uint64_t frame_count = 6 * GIB / FRAME_SIZE;
    struct frame_allocator *allocator = make_allocator(frame_count);
    frame_release_range(allocator, 4 * GIB - 8 * FRAME_SIZE, 2 * GIB + 8 * FRAME_SIZE);
    /* Start the search above 4 GiB so the hint has to be ignored. */
    assert_int_equal(frame_allocate(allocator, 1, 1, 0), 4 * GIB - 8 * FRAME_SIZE);
    allocator->search_hint = 4 * GIB / FRAME_SIZE + 100;
    for (int i = 0; i < 7; i++) {
        uint64_t physical = frame_allocate(allocator, 1, 1, 4 * GIB);
        assert_int_not_equal(physical, FRAME_NONE);
        assert_true(physical + FRAME_SIZE <= 4 * GIB);
    }
    assert_int_equal(frame_allocate(allocator, 1, 1, 4 * GIB), FRAME_NONE);
    /* Without a limit there is plenty left above. */
    uint64_t above = frame_allocate(allocator, 1, 1, 0);
    assert_true(above >= 4 * GIB && above != FRAME_NONE);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_limit_run_must_lie_wholly_below(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(1024);
    frame_release_range(allocator, 250 * FRAME_SIZE, 100 * FRAME_SIZE); /* frames 250..349 */
    /* 1 MiB = frame 256: only 250..255 lie below it. */
    assert_int_equal(frame_allocate(allocator, 8, 1, 1 * MIB), FRAME_NONE);
    assert_int_equal(frame_allocate(allocator, 6, 1, 1 * MIB), 250 * FRAME_SIZE);
    assert_int_equal(frame_allocate(allocator, 1, 1, 1 * MIB), FRAME_NONE);
    /* An unaligned limit counts only whole frames below it. */
    assert_int_equal(frame_allocate(allocator, 1, 1, 1 * MIB + 0x800), FRAME_NONE);
    assert_int_equal(frame_allocate(allocator, 1, 1, 1 * MIB + FRAME_SIZE), 1 * MIB);
    /* A limit above the bitmap is the bitmap's end. */
    assert_int_equal(frame_allocate(allocator, 4, 4, 64 * GIB), 260 * FRAME_SIZE);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_free_and_reuse(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(128);
    frame_release_range(allocator, 0, 128 * FRAME_SIZE);
    uint64_t first = frame_allocate(allocator, 1, 1, 0);
    uint64_t second = frame_allocate(allocator, 4, 1, 0);
    uint64_t third = frame_allocate(allocator, 1, 1, 0);
    assert_int_equal(allocator->free_count, 122);
    assert_true(frame_free(allocator, second, 4));
    assert_int_equal(allocator->free_count, 126);
    assert_frames_free(allocator, second / FRAME_SIZE, 4, true);
    /* The freed run is found again (the hint moved back). */
    assert_int_equal(frame_allocate(allocator, 4, 1, 0), second);
    assert_true(frame_free(allocator, first, 1));
    assert_int_equal(frame_allocate(allocator, 1, 1, 0), first);
    assert_int_not_equal(third, first);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_double_free_refused(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(128);
    frame_release_range(allocator, 0, 128 * FRAME_SIZE);
    uint64_t run = frame_allocate(allocator, 4, 4, 0);
    assert_int_not_equal(run, FRAME_NONE);
    assert_true(frame_free(allocator, run, 4));
    uint64_t count = allocator->free_count;
    assert_false(frame_free(allocator, run, 4));
    assert_false(frame_free(allocator, run + FRAME_SIZE, 1));
    assert_int_equal(allocator->free_count, count);
    /* A run that is partly free is refused whole: nothing at all is freed. */
    uint64_t again = frame_allocate(allocator, 4, 4, 0);
    assert_int_equal(again, run);
    assert_true(frame_free(allocator, again + 2 * FRAME_SIZE, 1));
    count = allocator->free_count;
    assert_false(frame_free(allocator, again, 4));
    assert_int_equal(allocator->free_count, count);
    assert_false(frame_is_free(allocator, again));
    assert_false(frame_is_free(allocator, again + FRAME_SIZE));
    assert_false(frame_is_free(allocator, again + 3 * FRAME_SIZE));
    check_accounting(allocator);
    destroy_allocator(allocator);
}

static void test_free_out_of_range_refused(void **state)
{
    (void)state;
    struct frame_allocator *allocator = make_allocator(100);
    frame_release_range(allocator, 0, 100 * FRAME_SIZE);
    frame_reserve_range(allocator, 90 * FRAME_SIZE, 10 * FRAME_SIZE);
    uint64_t count = allocator->free_count;
    assert_false(frame_free(allocator, 100 * FRAME_SIZE, 1));
    assert_false(frame_free(allocator, 98 * FRAME_SIZE, 3)); /* runs past the end */
    assert_false(frame_free(allocator, 1 * GIB, 1));
    assert_false(frame_free(allocator, 90 * FRAME_SIZE, UINT64_MAX)); /* count wraps */
    assert_false(frame_free(allocator, UINT64_MAX & ~(FRAME_SIZE - 1), 2));
    assert_false(frame_free(allocator, 90 * FRAME_SIZE + 1, 1)); /* unaligned */
    assert_false(frame_free(allocator, 90 * FRAME_SIZE, 0));
    assert_int_equal(allocator->free_count, count);
    assert_true(frame_free(allocator, 98 * FRAME_SIZE, 2));
    assert_int_equal(allocator->free_count, count + 2);
    check_accounting(allocator);
    destroy_allocator(allocator);
}

/* Random allocations and frees against a shadow model of the bitmap. */
static void test_random_against_model(void **state)
{
    (void)state;
    const uint64_t frame_count = 1000;
    struct frame_allocator *allocator = make_allocator(frame_count);
    frame_release_range(allocator, 0, frame_count * FRAME_SIZE);
    frame_reserve_range(allocator, 0, FRAME_SIZE);
    frame_reserve_range(allocator, 0x9f000, 0x61000);
    struct allocation {
        uint64_t physical, count;
    } live[400];
    int live_count = 0;
    unsigned seed = 12345;
    for (int step = 0; step < 5000; step++) {
        seed = seed * 1103515245u + 12345u;
        unsigned choice = (seed >> 16) % 3;
        if (choice != 0 && live_count < 400) {
            uint64_t count = 1 + (seed >> 8) % 9;
            uint64_t align = 1ull << ((seed >> 4) % 4);
            uint64_t limit = (seed & 1) ? 512 * FRAME_SIZE : 0;
            uint64_t before = allocator->free_count;
            uint64_t physical = frame_allocate(allocator, count, align, limit);
            if (physical == FRAME_NONE) {
                assert_int_equal(allocator->free_count, before);
                continue;
            }
            assert_int_equal(physical % (align * FRAME_SIZE), 0);
            if (limit != 0)
                assert_true(physical + count * FRAME_SIZE <= limit);
            for (int i = 0; i < live_count; i++)
                assert_true(physical + count * FRAME_SIZE <= live[i].physical ||
                            live[i].physical + live[i].count * FRAME_SIZE <= physical);
            assert_true(physical >= FRAME_SIZE);
            assert_true(physical + count * FRAME_SIZE <= 0x9f000 || physical >= 0x100000);
            assert_int_equal(allocator->free_count, before - count);
            live[live_count++] = (struct allocation){physical, count};
        } else if (live_count > 0) {
            int victim = (int)((seed >> 8) % (unsigned)live_count);
            assert_true(frame_free(allocator, live[victim].physical, live[victim].count));
            assert_false(frame_free(allocator, live[victim].physical, live[victim].count));
            live[victim] = live[--live_count];
        }
        if (step % 50 == 0)
            check_accounting(allocator);
    }
    check_accounting(allocator);
    destroy_allocator(allocator);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitmap_bytes),
        cmocka_unit_test(test_init_all_used),
        cmocka_unit_test(test_release_aligned_range),
        cmocka_unit_test(test_release_partial_edges_stay_used),
        cmocka_unit_test(test_release_out_of_range_ignored),
        cmocka_unit_test(test_reserve_range_takes_partial_frames),
        cmocka_unit_test(test_single_frames_until_exhaustion),
        cmocka_unit_test(test_contiguous_aligned),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_limit_below_4g),
        cmocka_unit_test(test_limit_run_must_lie_wholly_below),
        cmocka_unit_test(test_free_and_reuse),
        cmocka_unit_test(test_double_free_refused),
        cmocka_unit_test(test_free_out_of_range_refused),
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
