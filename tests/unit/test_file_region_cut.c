/* test_file_region_cut.c: what munmap leaves of a file region
 * (file_region_cut, lib/include/formica/file_region.h), the arithmetic the
 * m-kernel's records and the library's share: a head, a tail, a middle
 * (two parts), all of it, and a range that misses it or overhangs it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <formica/file_region.h>

#define PAGE 4096ull
#define BASE (FILE_REGION_BASE + 16 * PAGE)

static void expect_cut(uint64_t from, uint64_t to, uint64_t head, uint64_t tail_base, uint64_t tail)
{
    struct file_region_cut cut = file_region_cut(BASE, 10 * PAGE, from, to);
    assert_int_equal(cut.head_bytes, head);
    assert_int_equal(cut.tail_base, tail_base);
    assert_int_equal(cut.tail_bytes, tail);
}

static void test_a_head_a_tail_and_a_middle(void **state)
{
    (void)state;
    expect_cut(BASE, BASE + 3 * PAGE, 0, BASE + 3 * PAGE, 7 * PAGE);
    expect_cut(BASE + 8 * PAGE, BASE + 10 * PAGE, 8 * PAGE, BASE + 10 * PAGE, 0);
    expect_cut(BASE + 4 * PAGE, BASE + 6 * PAGE, 4 * PAGE, BASE + 6 * PAGE, 4 * PAGE);
}

static void test_all_of_it_and_ranges_past_its_ends(void **state)
{
    (void)state;
    expect_cut(BASE, BASE + 10 * PAGE, 0, BASE + 10 * PAGE, 0);
    expect_cut(BASE - 5 * PAGE, BASE + 20 * PAGE, 0, BASE + 10 * PAGE, 0);
    expect_cut(BASE - 5 * PAGE, BASE + 2 * PAGE, 0, BASE + 2 * PAGE, 8 * PAGE);
    expect_cut(BASE + 9 * PAGE, UINT64_MAX & ~(PAGE - 1), 9 * PAGE, BASE + 10 * PAGE, 0);
}

static void test_a_range_that_misses_it_leaves_it_whole(void **state)
{
    (void)state;
    expect_cut(BASE - 4 * PAGE, BASE, 10 * PAGE, BASE + 10 * PAGE, 0);
    expect_cut(BASE + 10 * PAGE, BASE + 12 * PAGE, 10 * PAGE, BASE + 10 * PAGE, 0);
    expect_cut(BASE + 3 * PAGE, BASE + 3 * PAGE, 10 * PAGE, BASE + 10 * PAGE, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_head_a_tail_and_a_middle),
        cmocka_unit_test(test_all_of_it_and_ranges_past_its_ends),
        cmocka_unit_test(test_a_range_that_misses_it_leaves_it_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
