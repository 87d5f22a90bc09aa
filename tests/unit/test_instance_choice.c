/* test_instance_choice.c: host unit tests of kernel/instance_choice.c, the
 * rule that picks which instance of a server a caller's core reaches. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "instance_choice.h"

static uint32_t one_socket(uint32_t core)
{
    (void)core;
    return 0;
}

/* Cores 0-7 on socket 0, 8-15 on socket 1. */
static uint32_t two_sockets(uint32_t core)
{
    return core / 8;
}

static void test_the_callers_own_core_first(void **state)
{
    (void)state;
    static const struct instance_place places[] = {{0, 1}, {1, 5}, {2, 9}, {3, 13}};
    assert_int_equal(instance_choose(places, 4, 1, one_socket), 0);
    assert_int_equal(instance_choose(places, 4, 5, one_socket), 1);
    assert_int_equal(instance_choose(places, 4, 13, one_socket), 3);
}

static void test_else_the_nearest_core_on_the_callers_socket(void **state)
{
    (void)state;
    static const struct instance_place places[] = {{0, 1}, {1, 5}, {2, 9}, {3, 13}};
    assert_int_equal(instance_choose(places, 4, 0, one_socket), 0);
    assert_int_equal(instance_choose(places, 4, 4, one_socket), 1);
    assert_int_equal(instance_choose(places, 4, 3, one_socket), 0); /* a tie: the lower index */
    assert_int_equal(instance_choose(places, 4, 15, one_socket), 3);
    /* Core 7 is nearer C9 by number, but C9 is on the other socket. */
    assert_int_equal(instance_choose(places, 4, 7, two_sockets), 1);
    assert_int_equal(instance_choose(places, 4, 8, two_sockets), 2);
}

static void test_else_core_mod_count(void **state)
{
    (void)state;
    static const struct instance_place places[] = {{0, 1}, {1, 2}, {2, 3}};
    assert_int_equal(instance_choose(places, 3, 8, two_sockets), 8 % 3);
    assert_int_equal(instance_choose(places, 3, 12, two_sockets), 12 % 3);
    /* Gaps in the indexes: the answer is a position in `places`. */
    static const struct instance_place gapped[] = {{0, 1}, {4, 2}};
    assert_int_equal(instance_choose(gapped, 2, 9, two_sockets), 1);
}

static void test_a_lone_instance_serves_everyone(void **state)
{
    (void)state;
    static const struct instance_place lone[] = {{0, 3}};
    for (uint32_t core = 0; core < 16; core++)
        assert_int_equal(instance_choose(lone, 1, core, two_sockets), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_callers_own_core_first),
        cmocka_unit_test(test_else_the_nearest_core_on_the_callers_socket),
        cmocka_unit_test(test_else_core_mod_count),
        cmocka_unit_test(test_a_lone_instance_serves_everyone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
