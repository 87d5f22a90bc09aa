/* test_run_queue.c: the per-core scheduler queues (kernel/run_queue.c and
 * kernel/fair_queue.c): strict priority between levels, FIFO within one
 * account, the least-used account first, where a returning account starts,
 * when a running account owes the core, the crowd of accounts, and the full
 * and empty cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "run_queue.h"

#define CREDIT 1000
#define ACCOUNT 7 /* the account of the tests that use one */

static struct run_queue queue;

static int setup(void **state)
{
    (void)state;
    run_queue_init(&queue, CREDIT);
    return 0;
}

/* Pushes at `priority` for ACCOUNT, nothing running. */
static bool push(uint32_t slot, uint32_t priority)
{
    return run_queue_push(&queue, slot, priority, ACCOUNT, 0);
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
        assert_true(push(slot, 1));
    for (uint32_t slot = 10; slot < 20; slot++)
        assert_int_equal(run_queue_pop(&queue), slot);
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
}

static void test_servers_before_applications(void **state)
{
    (void)state;
    assert_true(push(1, 1));
    assert_true(push(2, 1));
    assert_true(push(3, 0));
    assert_int_equal(run_queue_best_priority(&queue), 0);
    assert_int_equal(run_queue_pop(&queue), 3);
    assert_int_equal(run_queue_best_priority(&queue), 1);
    assert_true(push(4, 0));
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
    assert_true(push(7, 1));
    assert_false(run_queue_has_more_urgent(&queue, 1)); /* the same level is not more urgent */
    assert_false(run_queue_has_more_urgent(&queue, 0));
    assert_true(push(8, 0));
    assert_true(run_queue_has_more_urgent(&queue, 1));
    assert_false(run_queue_has_more_urgent(&queue, 0));
    assert_true(run_queue_has_more_urgent(&queue, UINT32_MAX)); /* a bad level: bounded */
    /* the levels' summary follows the queues: emptied level 0 is no longer more urgent */
    assert_int_equal(run_queue_pop(&queue), 8);
    assert_false(run_queue_has_more_urgent(&queue, 1));
    assert_true(push(9, 0));
    assert_true(push(10, 0));
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
        push(slot, 1);
    uint32_t order[9];
    for (int i = 0; i < 9; i++) {
        order[i] = run_queue_pop(&queue);
        push(order[i], 1);
    }
    for (int i = 0; i < 9; i++)
        assert_int_equal(order[i], (uint32_t)(i % 3));
}

static void test_bad_priority_refused(void **state)
{
    (void)state;
    assert_false(push(1, RUN_QUEUE_LEVELS));
    assert_false(push(1, UINT32_MAX));
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
}

static void test_full_level_refused_without_loss(void **state)
{
    (void)state;
    for (uint32_t slot = 0; slot < RUN_QUEUE_CAPACITY; slot++)
        assert_true(push(slot, 1));
    assert_false(push(999, 1));
    assert_true(push(7, 0)); /* the other level still has room */
    assert_int_equal(run_queue_pop(&queue), 7);
    for (uint32_t slot = 0; slot < RUN_QUEUE_CAPACITY; slot++)
        assert_int_equal(run_queue_pop(&queue), slot);
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
}

/* The fair level's own view (fair_queue.c), for the tests below. */
static struct fair_queue *applications(void)
{
    return &queue.applications;
}

static void test_least_used_account_first_oldest_within_it(void **state)
{
    (void)state;
    assert_true(run_queue_push(&queue, 1, 1, 10, 0));
    assert_true(run_queue_push(&queue, 2, 1, 10, 0));
    assert_true(run_queue_push(&queue, 3, 1, 20, 0));
    fair_queue_charge(applications(), 10, 5000);
    assert_int_equal(run_queue_pop(&queue), 3); /* account 20 used less */
    assert_int_equal(run_queue_pop(&queue), 1); /* then account 10's, oldest first */
    assert_int_equal(run_queue_pop(&queue), 2);
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
    assert_int_equal(run_queue_best_priority(&queue), RUN_QUEUE_LEVELS);
}

static void test_returning_account_starts_a_credit_below_the_least_used(void **state)
{
    (void)state;
    fair_queue_charge(applications(), 10, 100000);     /* account 10 runs alone a while */
    assert_true(run_queue_push(&queue, 5, 1, 20, 10)); /* 20 wakes while 10 runs */
    assert_int_equal(fair_queue_used(applications(), 20), 100000 - CREDIT);
    /* ...and is owed the core beyond a margin smaller than the credit */
    assert_true(fair_queue_owes_another(applications(), 10, CREDIT / 2));
    assert_false(fair_queue_owes_another(applications(), 10, CREDIT * 2));
    assert_false(fair_queue_owes_another(applications(), 20, 0)); /* not the other way round */
    assert_int_equal(run_queue_pop(&queue), 5);
    /* 20 used far more than 10 since: it comes back where it is, not at the credit */
    fair_queue_charge(applications(), 20, 500000);
    assert_true(run_queue_push(&queue, 5, 1, 20, 10));
    assert_int_equal(fair_queue_used(applications(), 20), 100000 - CREDIT + 500000);
    assert_false(fair_queue_owes_another(applications(), 10, 0));
}

static void test_own_ready_process_is_no_debt(void **state)
{
    (void)state;
    fair_queue_charge(applications(), 10, 100000);
    assert_true(run_queue_push(&queue, 1, 1, 10, 10));
    assert_false(fair_queue_owes_another(applications(), 10, 0));
    assert_false(fair_queue_owes_another(applications(), 99, 0)); /* an account not remembered */
}

/* Six processes of account 10 and one of account 20 share a core slice by
 * slice: each account gets half the slices, not a seventh. */
static void test_two_accounts_share_a_core_by_halves(void **state)
{
    (void)state;
    for (uint32_t slot = 0; slot < 6; slot++)
        assert_true(run_queue_push(&queue, slot, 1, 10, 0));
    assert_true(run_queue_push(&queue, 6, 1, 20, 0));
    uint32_t slices_of_20 = 0, turns = 700;
    for (uint32_t turn = 0; turn < turns; turn++) {
        uint32_t slot = run_queue_pop(&queue);
        uint32_t account = slot == 6 ? 20 : 10;
        slices_of_20 += account == 20;
        fair_queue_charge(applications(), account, 100);
        assert_true(run_queue_push(&queue, slot, 1, account, account));
    }
    assert_in_range(slices_of_20, turns / 2 - 2, turns / 2 + 2);
}

/* SYS_SHARE_WEIGHT: an account weighted 333 (remote_share 0.25) beside an
 * ordinary one, both always ready, gets a quarter of the cycles; one
 * weighted 3000 (0.75) three quarters. */
static void test_a_weighted_account_gets_its_share_of_the_cycles(void **state)
{
    (void)state;
    assert_int_equal(fair_queue_weighed(3000, 0), 3000);
    assert_int_equal(fair_queue_weighed(3000, FAIR_QUEUE_WEIGHT_ONE), 3000);
    assert_int_equal(fair_queue_weighed(3000, 3000), 1000);
    assert_int_equal(fair_queue_weighed(1000, 333), 3003);
    assert_true(fair_queue_weighed(UINT64_MAX / 2, 1) > UINT64_MAX / 4); /* no wrap-around */
    const uint32_t weights[] = {333, 3000};
    const uint32_t wanted_permille[] = {250, 750};
    for (unsigned w = 0; w < 2; w++) {
        run_queue_init(&queue, CREDIT);
        assert_true(run_queue_push(&queue, 1, 1, 10, 0)); /* local, ordinary */
        assert_true(run_queue_push(&queue, 2, 1, 20, 0)); /* remote, weighted */
        uint64_t cycles_of_20 = 0, total = 0;
        for (uint32_t turn = 0; turn < 4000; turn++) {
            uint32_t slot = run_queue_pop(&queue);
            uint32_t account = slot == 2 ? 20 : 10;
            uint64_t cycles = 1000 + turn % 7 * 100; /* slices of uneven length */
            total += cycles;
            cycles_of_20 += account == 20 ? cycles : 0;
            fair_queue_charge(applications(), account,
                              fair_queue_weighed(cycles, account == 20 ? weights[w] : 0));
            assert_true(run_queue_push(&queue, slot, 1, account, account));
        }
        assert_in_range(cycles_of_20 * 1000 / total, wanted_permille[w] - 10,
                        wanted_permille[w] + 10);
    }
}

static void test_more_accounts_than_entries_share_the_crowd_without_loss(void **state)
{
    (void)state;
    uint32_t accounts = FAIR_QUEUE_ACCOUNTS + 5;
    for (uint32_t account = 1; account <= accounts; account++)
        assert_true(run_queue_push(&queue, account, 1, account, 0));
    assert_int_equal(applications()->accounts[FAIR_QUEUE_CROWD].ready, 6);
    uint32_t seen[FAIR_QUEUE_ACCOUNTS + 6] = {0};
    for (uint32_t popped = 0; popped < accounts; popped++) {
        uint32_t slot = run_queue_pop(&queue);
        assert_in_range(slot, 1, accounts);
        seen[slot]++;
    }
    for (uint32_t account = 1; account <= accounts; account++)
        assert_int_equal(seen[account], 1);
    assert_int_equal(run_queue_pop(&queue), RUN_QUEUE_EMPTY);
    /* the entries are free again for new accounts */
    assert_true(run_queue_push(&queue, 3, 1, 1000, 0));
    assert_int_equal(run_queue_pop(&queue), 3);
}

static void test_a_server_charges_only_accounts_the_core_knows(void **state)
{
    (void)state;
    assert_true(run_queue_push(&queue, 1, 1, 10, 0));
    fair_queue_charge_known(applications(), 10, 700);
    fair_queue_charge_known(applications(), 30, 900); /* no application here: no entry */
    assert_int_equal(fair_queue_used(applications(), 10), 700);
    assert_int_equal(fair_queue_used(applications(), 30), 0);
    assert_int_equal(applications()->accounts[1].account, 0);
}

static void test_use_stops_at_the_largest_count_instead_of_wrapping(void **state)
{
    (void)state;
    fair_queue_charge(applications(), 10, UINT64_MAX - 5);
    fair_queue_charge(applications(), 10, 100);
    assert_true(fair_queue_used(applications(), 10) == UINT64_MAX);
    fair_queue_charge_known(applications(), 0, 100); /* no account: no entry, free or not */
    assert_int_equal(applications()->accounts[1].used, 0);
}

static void test_account_zero_refused(void **state)
{
    (void)state;
    assert_false(run_queue_push(&queue, 1, 1, 0, 0));
    assert_int_equal(run_queue_best_priority(&queue), RUN_QUEUE_LEVELS);
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
        cmocka_unit_test_setup(test_least_used_account_first_oldest_within_it, setup),
        cmocka_unit_test_setup(test_returning_account_starts_a_credit_below_the_least_used, setup),
        cmocka_unit_test_setup(test_own_ready_process_is_no_debt, setup),
        cmocka_unit_test_setup(test_two_accounts_share_a_core_by_halves, setup),
        cmocka_unit_test_setup(test_more_accounts_than_entries_share_the_crowd_without_loss, setup),
        cmocka_unit_test_setup(test_a_server_charges_only_accounts_the_core_knows, setup),
        cmocka_unit_test_setup(test_use_stops_at_the_largest_count_instead_of_wrapping, setup),
        cmocka_unit_test_setup(test_account_zero_refused, setup),
        cmocka_unit_test_setup(test_a_weighted_account_gets_its_share_of_the_cycles, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
