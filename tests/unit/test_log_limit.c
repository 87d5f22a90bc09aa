/* test_log_limit.c: host unit tests of lib/log_limit.c, the limit on
 * refusal lines per sender (formica/log_limit.h): the burst, the count of
 * lines held back, a new second, senders apart, a sender's entry taken. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <formica/log_limit.h>

static struct log_limit limit;

static int reset(void **state)
{
    (void)state;
    memset(&limit, 0, sizeof limit);
    return 0;
}

static void test_a_flood_is_cut_and_counted(void **state)
{
    (void)state;
    uint64_t held = 99;
    for (uint32_t i = 0; i < LOG_LIMIT_PER_SECOND; i++) {
        assert_true(log_limit_allow(&limit, 7, 1000 + i, &held));
        assert_int_equal(held, 0);
    }
    for (uint32_t i = 0; i < 500; i++)
        assert_false(log_limit_allow(&limit, 7, 2000 + i, &held));
    assert_true(log_limit_allow(&limit, 7, 1000 + 1000000, &held)); /* a new second */
    assert_int_equal(held, 500); /* the lines not shown are reported */
    assert_true(log_limit_allow(&limit, 7, 1000 + 1000001, &held));
    assert_int_equal(held, 0);
}

static void test_senders_are_apart(void **state)
{
    (void)state;
    uint64_t held;
    for (uint32_t i = 0; i < LOG_LIMIT_PER_SECOND + 10; i++)
        log_limit_allow(&limit, 3, 10, &held);
    assert_false(log_limit_allow(&limit, 3, 11, &held));
    assert_true(log_limit_allow(&limit, 4, 11, &held)); /* another sender still speaks */
}

static void test_a_sender_in_the_same_entry_starts_afresh(void **state)
{
    (void)state;
    uint64_t held;
    for (uint32_t i = 0; i < LOG_LIMIT_PER_SECOND + 3; i++)
        log_limit_allow(&limit, 5, 10, &held);
    assert_true(log_limit_allow(&limit, 5 + LOG_LIMIT_SENDERS, 12, &held));
    assert_int_equal(held, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_flood_is_cut_and_counted, reset),
        cmocka_unit_test_setup(test_senders_are_apart, reset),
        cmocka_unit_test_setup(test_a_sender_in_the_same_entry_starts_afresh, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
