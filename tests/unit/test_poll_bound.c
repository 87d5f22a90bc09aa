/* test_poll_bound.c: the ICA poll's adaptive bound (kernel/poll_bound.h):
 * short halts after polls that gave up double it up to the most, long ones
 * halve it down to the least, a fixed bound stays, and polls turned off
 * stay off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "poll_bound.h"

#define LEAST 5u
#define MOST 200u

static void test_short_halts_grow_it_to_the_most(void **state)
{
    (void)state;
    static const uint64_t expected[] = {10, 20, 40, 80, 160, 200, 200};
    uint64_t bound = LEAST;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        bound = poll_bound_after_halt(bound, MOST - 1, LEAST, MOST);
        assert_int_equal(bound, expected[i]);
    }
}

static void test_long_halts_shrink_it_to_the_least(void **state)
{
    (void)state;
    static const uint64_t expected[] = {100, 50, 25, 12, 6, 5, 5};
    uint64_t bound = MOST;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        bound = poll_bound_after_halt(bound, MOST, LEAST, MOST);
        assert_int_equal(bound, expected[i]);
    }
}

static void test_fixed_and_off_bounds_stay(void **state)
{
    (void)state;
    assert_int_equal(poll_bound_after_halt(LEAST, 0, LEAST, LEAST), LEAST);
    assert_int_equal(poll_bound_after_halt(LEAST, 1000, LEAST, LEAST), LEAST);
    assert_int_equal(poll_bound_after_halt(0, 0, 0, 0), 0);
    assert_int_equal(poll_bound_after_halt(0, 1000, 0, 0), 0);
    /* the TSC cycles of real bounds: no overflow near the top */
    assert_int_equal(poll_bound_after_halt(UINT64_MAX / 4, 0, 1, UINT64_MAX), UINT64_MAX / 4 * 2);
    assert_int_equal(poll_bound_after_halt(UINT64_MAX / 2, 0, 1, UINT64_MAX), UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_halts_grow_it_to_the_most),
        cmocka_unit_test(test_long_halts_shrink_it_to_the_least),
        cmocka_unit_test(test_fixed_and_off_bounds_stay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
