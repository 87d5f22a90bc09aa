/* test_run_queue.c: the per-core scheduler queues (kernel/run_queue.c):
 * strict priority between levels, FIFO (round robin) within a level, the
 * and the full and empty cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "run_queue.h"

static struct run_queue queue;

static int setup(void **state)
{
    (void)state;
    run_queue_init(&queue);
    return 0;
}

static void test_empty_queue_pops_nothing(void **state)
{
    (void)state;
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
    assert_int_equal(run_queue_best_priority(&queue), RUN_QUEUE_LEVELS);
}

static void test_fifo_within_a_level(void **state)
{
    (void)state;
    for (uint32_t slot = 10; slot < 20; slot++)
        assert_true(run_queue_push(&queue, slot, 1));
    for (uint32_t slot = 10; slot < 20; slot++)
        assert_int_equal(run_queue_pop(&queue), slot);
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
}

static void test_servers_before_applications(void **state)
{
    (void)state;
    assert_true(run_queue_push(&queue, 1, 1));
    assert_true(run_queue_push(&queue, 2, 1));
    assert_true(run_queue_push(&queue, 3, 0));
    assert_int_equal(run_queue_best_priority(&queue), 0);
    assert_int_equal(run_queue_pop(&queue), 3);
    assert_int_equal(run_queue_best_priority(&queue), 1);
    assert_true(run_queue_push(&queue, 4, 0));
    assert_int_equal(run_queue_pop(&queue), 4);
    assert_int_equal(run_queue_pop(&queue), 1);
    assert_int_equal(run_queue_pop(&queue), 2);
}

static void test_more_urgent_than(void **state)
{
    (void)state;
    /* The fast path's question: is anything more urgent than `priority` ready? */
    assert_false(run_queue_has_more_urgent(&queue, 0));
    assert_false(run_queue_has_more_urgent(&queue, 1));
    assert_true(run_queue_push(&queue, 7, 1));
    assert_false(run_queue_has_more_urgent(&queue, 1)); /* the same level is not more urgent */
    assert_false(run_queue_has_more_urgent(&queue, 0));
    assert_true(run_queue_push(&queue, 8, 0));
    assert_true(run_queue_has_more_urgent(&queue, 1));
    assert_false(run_queue_has_more_urgent(&queue, 0));
    assert_true(run_queue_has_more_urgent(&queue, UINT32_MAX)); /* a bad level: bounded */
    /* the levels' summary follows the queues: emptied level 0 is no longer more urgent */
    assert_int_equal(run_queue_pop(&queue), 8);
    assert_false(run_queue_has_more_urgent(&queue, 1));
    assert_true(run_queue_push(&queue, 9, 0));
    assert_true(run_queue_push(&queue, 10, 0));
    assert_int_equal(run_queue_pop(&queue), 9);
    assert_true(run_queue_has_more_urgent(&queue, 1)); /* one left at level 0 */
    assert_int_equal(run_queue_pop(&queue), 10);
    assert_false(run_queue_has_more_urgent(&queue, 1));
    assert_int_equal(run_queue_pop(&queue), 7);
    assert_int_equal(run_queue_best_priority(&queue), RUN_QUEUE_LEVELS);
}

static void test_round_robin_requeue(void **state)
{
    (void)state;
    /* A process that used its slice goes to the back of its level. */
    for (uint32_t slot = 0; slot < 3; slot++)
        run_queue_push(&queue, slot, 1);
    uint32_t order[9];
    for (int i = 0; i < 9; i++) {
        order[i] = run_queue_pop(&queue);
        run_queue_push(&queue, order[i], 1);
    }
    for (int i = 0; i < 9; i++)
        assert_int_equal(order[i], (uint32_t)(i % 3));
}

static void test_bad_priority_refused(void **state)
{
    (void)state;
    assert_false(run_queue_push(&queue, 1, RUN_QUEUE_LEVELS));
    assert_false(run_queue_push(&queue, 1, UINT32_MAX));
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
}

static void test_full_level_refused_without_loss(void **state)
{
    (void)state;
    for (uint32_t slot = 0; slot < RUN_QUEUE_CAPACITY; slot++)
        assert_true(run_queue_push(&queue, slot, 1));
    assert_false(run_queue_push(&queue, 999, 1));
    assert_true(run_queue_push(&queue, 7, 0)); /* the other level still has room */
    assert_int_equal(run_queue_pop(&queue), 7);
    for (uint32_t slot = 0; slot < RUN_QUEUE_CAPACITY; slot++)
        assert_int_equal(run_queue_pop(&queue), slot);
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_empty_queue_pops_nothing, setup),
        cmocka_unit_test_setup(test_fifo_within_a_level, setup),
        cmocka_unit_test_setup(test_servers_before_applications, setup),
        cmocka_unit_test_setup(test_more_urgent_than, setup),
        cmocka_unit_test_setup(test_round_robin_requeue, setup),
        cmocka_unit_test_setup(test_bad_priority_refused, setup),
        cmocka_unit_test_setup(test_full_level_refused_without_loss, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
