/* test_flmalloc_policy.c: host unit tests of lib/flmalloc_policy.c, libflmalloc's
 * decisions: the local limit from the memory report, the 10 MiB rule, the
 * limit reached and given back by frees, and sizes that overflow. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "flmalloc_policy.h" /* lib/, through -iquote */

#define MIB (1ull << 20)

static void test_limit_is_a_part_of_available(void **state)
{
    (void)state;
    assert_int_equal(flmalloc_limit_of(100 * MIB, 80), 80 * MIB);
    assert_int_equal(flmalloc_limit_of(0, 80), 0);
    assert_int_equal(flmalloc_limit_of(99, 80), 79); /* rounded down, never up */
    assert_int_equal(flmalloc_limit_of(1000, 100), 1000);
    /* no overflow at the top: 80 % of 2^64 - 1 */
    assert_int_equal(flmalloc_limit_of(UINT64_MAX, 80), UINT64_MAX / 100 * 80 + 15 * 80 / 100);
    assert_true(flmalloc_limit_of(UINT64_MAX, 80) < UINT64_MAX);
}

static void test_under_10_mib_is_always_local(void **state)
{
    (void)state;
    struct flmalloc_budget budget;
    flmalloc_budget_init(&budget, 0); /* no local memory at all */
    assert_int_equal(flmalloc_choose(&budget, 0), FLMALLOC_LOCAL);
    assert_int_equal(flmalloc_choose(&budget, FLMALLOC_ALWAYS_LOCAL - 1), FLMALLOC_LOCAL);
    assert_int_equal(flmalloc_choose(&budget, FLMALLOC_ALWAYS_LOCAL), FLMALLOC_FAR);
    /* ... even past the limit */
    flmalloc_budget_init(&budget, 20 * MIB);
    flmalloc_took_local(&budget, 30 * MIB);
    assert_int_equal(flmalloc_choose(&budget, 9 * MIB), FLMALLOC_LOCAL);
    assert_int_equal(flmalloc_choose(&budget, 10 * MIB), FLMALLOC_FAR);
}

static void test_large_requests_are_local_up_to_the_limit(void **state)
{
    (void)state;
    struct flmalloc_budget budget;
    flmalloc_budget_init(&budget, 64 * MIB);
    assert_int_equal(flmalloc_choose(&budget, 64 * MIB), FLMALLOC_LOCAL); /* exactly the limit */
    assert_int_equal(flmalloc_choose(&budget, 64 * MIB + 1), FLMALLOC_FAR);
    flmalloc_took_local(&budget, 40 * MIB);
    assert_int_equal(flmalloc_choose(&budget, 24 * MIB), FLMALLOC_LOCAL);
    assert_int_equal(flmalloc_choose(&budget, 24 * MIB + 1), FLMALLOC_FAR);
    flmalloc_took_local(&budget, 24 * MIB); /* the limit reached */
    assert_int_equal(flmalloc_choose(&budget, 10 * MIB), FLMALLOC_FAR);
    assert_int_equal(flmalloc_choose(&budget, 1), FLMALLOC_LOCAL);
    assert_int_equal(budget.local, 64 * MIB);
}

static void test_frees_give_the_budget_back(void **state)
{
    (void)state;
    struct flmalloc_budget budget;
    flmalloc_budget_init(&budget, 32 * MIB);
    flmalloc_took_local(&budget, 20 * MIB);
    flmalloc_took_local(&budget, 12 * MIB);
    assert_int_equal(flmalloc_choose(&budget, 12 * MIB), FLMALLOC_FAR);
    flmalloc_gave_local(&budget, 12 * MIB);
    assert_int_equal(flmalloc_choose(&budget, 12 * MIB), FLMALLOC_LOCAL);
    assert_int_equal(budget.local, 20 * MIB);
    assert_int_equal(budget.local_peak, 32 * MIB); /* the peak stays */
    flmalloc_gave_local(&budget, 100 * MIB);       /* more than held: never below zero */
    assert_int_equal(budget.local, 0);
}

static void test_local_past_the_limit_sends_large_ones_far(void **state)
{
    (void)state;
    struct flmalloc_budget budget;
    flmalloc_budget_init(&budget, 16 * MIB);
    for (int i = 0; i < 3; i++)
        flmalloc_took_local(&budget, 9 * MIB); /* small ones go over the limit */
    assert_true(budget.local > budget.limit);
    assert_int_equal(flmalloc_choose(&budget, 10 * MIB), FLMALLOC_FAR);
    assert_int_equal(flmalloc_choose(&budget, UINT64_MAX / 2), FLMALLOC_FAR);
}

static void test_sizes_that_overflow_are_refused(void **state)
{
    (void)state;
    struct flmalloc_budget budget;
    flmalloc_budget_init(&budget, UINT64_MAX);
    assert_int_equal(flmalloc_choose(&budget, UINT64_MAX), FLMALLOC_REFUSED);
    assert_int_equal(flmalloc_choose(&budget, UINT64_MAX - FLMALLOC_PAGE_BYTES + 1),
                     FLMALLOC_REFUSED);
    assert_int_not_equal(flmalloc_choose(&budget, UINT64_MAX - FLMALLOC_PAGE_BYTES),
                         FLMALLOC_REFUSED);
    uint64_t bytes = 7;
    assert_false(flmalloc_array_bytes(1ull << 33, 1ull << 31, &bytes));
    assert_false(flmalloc_array_bytes(UINT64_MAX, 2, &bytes));
    assert_int_equal(bytes, 7); /* untouched */
    assert_true(flmalloc_array_bytes(1ull << 32, 1ull << 31, &bytes));
    assert_int_equal(bytes, 1ull << 63);
    assert_true(flmalloc_array_bytes(UINT64_MAX, 0, &bytes));
    assert_int_equal(bytes, 0);
}

static void test_far_lengths_are_whole_pages(void **state)
{
    (void)state;
    assert_int_equal(flmalloc_far_length(0), 4096);
    assert_int_equal(flmalloc_far_length(1), 4096);
    assert_int_equal(flmalloc_far_length(4096), 4096);
    assert_int_equal(flmalloc_far_length(4097), 8192);
    assert_int_equal(flmalloc_far_length(10 * MIB + 1), 10 * MIB + 4096);
    uint64_t largest = UINT64_MAX - FLMALLOC_PAGE_BYTES; /* the largest choose lets through */
    assert_true(flmalloc_far_length(largest) >= largest);
}

static void test_header_check_depends_on_the_size(void **state)
{
    (void)state;
    assert_int_not_equal(flmalloc_header_check(0), 0); /* a zeroed header never checks */
    assert_int_not_equal(flmalloc_header_check(64), flmalloc_header_check(65));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_is_a_part_of_available),
        cmocka_unit_test(test_under_10_mib_is_always_local),
        cmocka_unit_test(test_large_requests_are_local_up_to_the_limit),
        cmocka_unit_test(test_frees_give_the_budget_back),
        cmocka_unit_test(test_local_past_the_limit_sends_large_ones_far),
        cmocka_unit_test(test_sizes_that_overflow_are_refused),
        cmocka_unit_test(test_far_lengths_are_whole_pages),
        cmocka_unit_test(test_header_check_depends_on_the_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
