/* test_memnode_liveness.c: host tests of lib/memnode_liveness.c with a fake
 * clock: a slow node is probed and never declared dead while it answers; a
 * silent one is dead exactly at the deadline; while our own link is down a
 * node is unreachable, never probed nor dead, and its deadline starts again
 * when the link returns; retransmissions back off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <formica/memnode_liveness.h>

#define SECOND 1000000ull

static void test_idle_node_is_never_dead(void **state)
{
    (void)state;
    struct memnode_liveness liveness;
    memnode_liveness_init(&liveness, 0);
    /* nothing awaited: an hour of silence means nothing */
    assert_int_equal(memnode_liveness_check(&liveness, 3600 * SECOND), MEMNODE_ALIVE);
    /* waiting starts the clock from now, not from the last frame */
    memnode_liveness_waiting(&liveness, true, 3600 * SECOND);
    assert_int_equal(memnode_liveness_check(&liveness, 3600 * SECOND + 1), MEMNODE_ALIVE);
}

static void test_slow_node_answering_probes_stays_alive(void **state)
{
    (void)state;
    struct memnode_liveness liveness;
    memnode_liveness_init(&liveness, 0);
    memnode_liveness_waiting(&liveness, true, 1);
    uint64_t probes = 0;
    /* a minute of waiting; the node answers each probe 0.9 s after it */
    for (uint64_t now = 1; now < 60 * SECOND; now += SECOND / 10) {
        enum memnode_liveness_decision decision = memnode_liveness_check(&liveness, now);
        assert_int_not_equal(decision, MEMNODE_DEAD);
        if (decision == MEMNODE_PROBE)
            probes++;
        if (liveness.last_probe != 0 && now - liveness.last_probe == 9 * SECOND / 10)
            memnode_liveness_heard(&liveness, now);
    }
    assert_true(probes > 20);
}

static void test_silent_node_dies_at_the_deadline(void **state)
{
    (void)state;
    struct memnode_liveness liveness;
    memnode_liveness_init(&liveness, 0);
    memnode_liveness_heard(&liveness, 5 * SECOND);
    memnode_liveness_waiting(&liveness, true, 5 * SECOND);
    uint64_t probes = 0, now = 5 * SECOND;
    for (; now < 5 * SECOND + MEMNODE_DEAD_AFTER_US; now += SECOND / 4) {
        enum memnode_liveness_decision decision = memnode_liveness_check(&liveness, now);
        assert_int_not_equal(decision, MEMNODE_DEAD);
        probes += decision == MEMNODE_PROBE;
    }
    /* one probe a second after the first second of silence */
    assert_true(probes >= MEMNODE_DEAD_AFTER_US / SECOND - 2);
    assert_true(probes <= MEMNODE_DEAD_AFTER_US / SECOND);
    assert_int_equal(memnode_liveness_check(&liveness, now), MEMNODE_DEAD);
    assert_true(memnode_liveness_silence(&liveness, now) == MEMNODE_DEAD_AFTER_US);
}

static void test_wait_ends_and_restarts(void **state)
{
    (void)state;
    struct memnode_liveness liveness;
    memnode_liveness_init(&liveness, 0);
    memnode_liveness_waiting(&liveness, true, SECOND);
    memnode_liveness_waiting(&liveness, false, 10 * SECOND);
    assert_int_equal(memnode_liveness_check(&liveness, 100 * SECOND), MEMNODE_ALIVE);
    memnode_liveness_waiting(&liveness, true, 100 * SECOND);
    assert_true(memnode_liveness_silence(&liveness, 101 * SECOND) == SECOND);
    liveness.dead_after = 2 * SECOND; /* the deadline is the client's to set */
    assert_int_equal(memnode_liveness_check(&liveness, 102 * SECOND), MEMNODE_DEAD);
}

static void test_link_down_is_unreachable_not_dead(void **state)
{
    (void)state;
    struct memnode_liveness liveness;
    memnode_liveness_init(&liveness, 0);
    memnode_liveness_waiting(&liveness, true, SECOND);
    memnode_liveness_reachable(&liveness, false, 2 * SECOND);
    /* a minute without a link: far past the deadline, yet no probe and no verdict */
    for (uint64_t now = 2 * SECOND; now < 62 * SECOND; now += SECOND / 4) {
        assert_int_equal(memnode_liveness_check(&liveness, now), MEMNODE_UNREACHABLE);
        assert_true(memnode_liveness_silence(&liveness, now) == 0);
    }
    memnode_liveness_reachable(&liveness, false, 62 * SECOND); /* still down: no change */
    memnode_liveness_reachable(&liveness, true, 62 * SECOND);
    /* silence counts from the return: a probe after a second, dead a whole deadline later */
    assert_int_equal(memnode_liveness_check(&liveness, 62 * SECOND + SECOND / 2), MEMNODE_ALIVE);
    assert_int_equal(memnode_liveness_check(&liveness, 63 * SECOND + 1), MEMNODE_PROBE);
    assert_true(memnode_liveness_silence(&liveness, 70 * SECOND) == 8 * SECOND);
    assert_int_not_equal(memnode_liveness_check(&liveness, 62 * SECOND + MEMNODE_DEAD_AFTER_US - 1),
                         MEMNODE_DEAD);
    assert_int_equal(memnode_liveness_check(&liveness, 62 * SECOND + MEMNODE_DEAD_AFTER_US),
                     MEMNODE_DEAD);
}

static void test_frame_after_the_link_returns_counts(void **state)
{
    (void)state;
    struct memnode_liveness liveness;
    memnode_liveness_init(&liveness, 0);
    memnode_liveness_waiting(&liveness, true, 0);
    memnode_liveness_reachable(&liveness, false, SECOND);
    memnode_liveness_reachable(&liveness, true, 5 * SECOND);
    memnode_liveness_heard(&liveness, 9 * SECOND); /* the node answered the retransmission */
    assert_true(memnode_liveness_silence(&liveness, 10 * SECOND) == SECOND);
    assert_int_equal(memnode_liveness_check(&liveness, 9 * SECOND + SECOND / 2), MEMNODE_ALIVE);
}

static void test_backoff_doubles_to_a_cap(void **state)
{
    (void)state;
    uint64_t timeout = 300000;
    assert_true(memnode_backoff(timeout) == 600000);
    for (int i = 0; i < 20; i++)
        timeout = memnode_backoff(timeout);
    assert_true(timeout == MEMNODE_BACKOFF_MAX_US);
}

static void test_timeout_follows_the_round_trip(void **state)
{
    (void)state;
    assert_true(memnode_rto(0, 100000) == 100000); /* nothing measured yet */
    uint64_t srtt = memnode_rtt_update(0, 2000);
    assert_true(srtt == 2000);
    assert_true(memnode_rto(srtt, 100000) == 8000);
    for (int i = 0; i < 50; i++)
        srtt = memnode_rtt_update(srtt, 200000); /* a loaded host: the timeout grows */
    assert_true(memnode_rto(srtt, 100000) > 700000);
    assert_true(memnode_rto(10 * SECOND, 100000) == MEMNODE_RTO_MAX_US);
    assert_true(memnode_rto(1, 100000) == MEMNODE_RTO_MIN_US);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idle_node_is_never_dead),
        cmocka_unit_test(test_slow_node_answering_probes_stays_alive),
        cmocka_unit_test(test_silent_node_dies_at_the_deadline),
        cmocka_unit_test(test_wait_ends_and_restarts),
        cmocka_unit_test(test_link_down_is_unreachable_not_dead),
        cmocka_unit_test(test_frame_after_the_link_returns_counts),
        cmocka_unit_test(test_backoff_doubles_to_a_cap),
        cmocka_unit_test(test_timeout_follows_the_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
