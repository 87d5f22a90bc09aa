/* test_ring.c: host unit tests of kernel/ring.c, the single-producer
 * single-consumer ring: init checks, order, full/empty, wrap-around of the
 * free-running 32-bit indices, peek/count, and a two-thread stress test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>
#include "ring.h"

/* Allocates a ring of `capacity` slots of uint64_t, already initialized. */
static struct ring *make_ring(uint32_t capacity)
{
    struct ring *ring = calloc(1, ring_bytes(capacity, sizeof(uint64_t)));
    assert_non_null(ring);
    assert_true(ring_init(ring, capacity, sizeof(uint64_t)));
    return ring;
}

static void test_bytes(void **state)
{
    (void)state;
    assert_int_equal(ring_bytes(8, 16), sizeof(struct ring) + 128);
    /* The producer's and consumer's indices sit on different cache lines. */
    assert_true(offsetof(struct ring, tail) - offsetof(struct ring, head) >= 64);
}

static void test_init_rejects_bad_sizes(void **state)
{
    (void)state;
    struct ring *ring = calloc(1, ring_bytes(64, 8));
    assert_non_null(ring);
    assert_false(ring_init(ring, 0, 8));
    assert_false(ring_init(ring, 3, 8));
    assert_false(ring_init(ring, 6, 8));
    assert_false(ring_init(ring, 48, 8));
    assert_false(ring_init(ring, 8, 0));
    assert_true(ring_init(ring, 1, 8));
    assert_true(ring_init(ring, 64, 8));
    assert_int_equal(ring->capacity, 64);
    assert_int_equal(ring->slot_size, 8);
    assert_int_equal(ring_count(ring), 0);
    free(ring);
}

static void test_push_pop_order(void **state)
{
    (void)state;
    struct ring *ring = make_ring(8);
    for (uint64_t value = 100; value < 105; value++)
        assert_true(ring_push(ring, &value));
    assert_int_equal(ring_count(ring), 5);
    for (uint64_t expected = 100; expected < 105; expected++) {
        uint64_t value = 0;
        assert_true(ring_pop(ring, &value));
        assert_int_equal(value, expected);
    }
    assert_true(ring_is_empty(ring));
    free(ring);
}

static void test_full_push_changes_nothing(void **state)
{
    (void)state;
    struct ring *ring = make_ring(4);
    for (uint64_t value = 1; value <= 4; value++)
        assert_true(ring_push(ring, &value));
    assert_true(ring_is_full(ring));
    size_t bytes = ring_bytes(4, sizeof(uint64_t));
    unsigned char *before = malloc(bytes);
    assert_non_null(before);
    memcpy(before, ring, bytes);
    uint64_t extra = 99;
    assert_false(ring_push(ring, &extra));
    assert_memory_equal(before, ring, bytes);
    assert_int_equal(ring_count(ring), 4);
    uint64_t value = 0;
    assert_true(ring_pop(ring, &value));
    assert_int_equal(value, 1);
    assert_false(ring_is_full(ring));
    assert_true(ring_push(ring, &extra));
    for (uint64_t expected = 2; expected <= 4; expected++) {
        assert_true(ring_pop(ring, &value));
        assert_int_equal(value, expected);
    }
    assert_true(ring_pop(ring, &value));
    assert_int_equal(value, 99);
    free(before);
    free(ring);
}

static void test_empty_pop_and_peek(void **state)
{
    (void)state;
    struct ring *ring = make_ring(4);
    uint64_t value = 12345;
    assert_false(ring_pop(ring, &value));
    assert_int_equal(value, 12345);
    assert_null(ring_peek(ring));
    assert_true(ring_is_empty(ring));
    assert_false(ring_is_full(ring));
    free(ring);
}

static void test_peek_does_not_remove(void **state)
{
    (void)state;
    struct ring *ring = make_ring(4);
    uint64_t first = 7, second = 8, value = 0;
    assert_true(ring_push(ring, &first));
    assert_true(ring_push(ring, &second));
    const uint64_t *peeked = ring_peek(ring);
    assert_non_null(peeked);
    assert_int_equal(*peeked, 7);
    assert_int_equal(ring_count(ring), 2);
    peeked = ring_peek(ring);
    assert_int_equal(*peeked, 7);
    assert_true(ring_pop(ring, &value));
    assert_int_equal(value, 7);
    peeked = ring_peek(ring);
    assert_int_equal(*peeked, 8);
    assert_int_equal(ring_count(ring), 1);
    free(ring);
}

static void test_larger_slots(void **state)
{
    (void)state;
    struct message {
        uint32_t kind;
        char text[20];
    };
    struct ring *ring = calloc(1, ring_bytes(2, sizeof(struct message)));
    assert_non_null(ring);
    assert_true(ring_init(ring, 2, sizeof(struct message)));
    struct message out = {1, "first"}, out2 = {2, "second"}, in;
    assert_true(ring_push(ring, &out));
    assert_true(ring_push(ring, &out2));
    assert_false(ring_push(ring, &out));
    assert_true(ring_pop(ring, &in));
    assert_memory_equal(&in, &out, sizeof(in));
    assert_true(ring_pop(ring, &in));
    assert_memory_equal(&in, &out2, sizeof(in));
    free(ring);
}

/* Runs a ring whose indices start `before_wrap` below 2^32 through the wrap. */
static void check_wrap(uint32_t before_wrap)
{
    struct ring *ring = make_ring(8);
    ring->head = ring->tail = UINT32_MAX - before_wrap + 1;
    assert_int_equal(ring_count(ring), 0);
    assert_true(ring_is_empty(ring));
    uint64_t next_push = 0, next_pop = 0, value;
    /* Fill, check full, drain, several times across the wrap. */
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 8; i++) {
            assert_true(ring_push(ring, &next_push));
            next_push++;
            assert_int_equal(ring_count(ring), i + 1);
        }
        assert_true(ring_is_full(ring));
        assert_false(ring_push(ring, &next_push));
        assert_int_equal(ring_count(ring), 8);
        for (int i = 0; i < 8; i++) {
            assert_int_equal(*(const uint64_t *)ring_peek(ring), next_pop);
            assert_true(ring_pop(ring, &value));
            assert_int_equal(value, next_pop);
            next_pop++;
        }
        assert_true(ring_is_empty(ring));
        assert_false(ring_pop(ring, &value));
    }
    /* Half-full steady state across the wrap as well. */
    ring->head = ring->tail = UINT32_MAX - before_wrap + 1;
    for (int i = 0; i < 3; i++) {
        assert_true(ring_push(ring, &next_push));
        next_push++;
    }
    for (int step = 0; step < 40; step++) {
        assert_true(ring_push(ring, &next_push));
        next_push++;
        assert_true(ring_pop(ring, &value));
        assert_int_equal(value, next_pop);
        next_pop++;
        assert_int_equal(ring_count(ring), 3);
    }
    free(ring);
}

static void test_wrap_around(void **state)
{
    (void)state;
    for (uint32_t before_wrap = 1; before_wrap <= 9; before_wrap++)
        check_wrap(before_wrap);
    check_wrap(0); /* starts exactly at 0, after a wrap */
}

/* Full ring straddling the wrap: head already wrapped, tail not yet. */
static void test_full_across_wrap(void **state)
{
    (void)state;
    struct ring *ring = make_ring(4);
    ring->tail = UINT32_MAX - 1;
    ring->head = ring->tail;
    uint64_t value;
    for (uint64_t i = 0; i < 4; i++)
        assert_true(ring_push(ring, &i));
    assert_int_equal(ring->head, 2);
    assert_int_equal(ring_count(ring), 4);
    assert_true(ring_is_full(ring));
    assert_false(ring_push(ring, &value));
    for (uint64_t i = 0; i < 4; i++) {
        assert_true(ring_pop(ring, &value));
        assert_int_equal(value, i);
    }
    assert_int_equal(ring->tail, 2);
    free(ring);
}

#define STRESS_ITEMS 1000000u

struct stress {
    struct ring *ring;
    uint64_t producer_full_spins;
};

static void *stress_producer(void *argument)
{
    struct stress *stress = argument;
    for (uint64_t sequence = 0; sequence < STRESS_ITEMS; sequence++) {
        while (!ring_push(stress->ring, &sequence)) {
            stress->producer_full_spins++;
            sched_yield();
        }
    }
    return NULL;
}

static void stress_with_capacity(uint32_t capacity, uint32_t start_index)
{
    struct stress stress = {make_ring(capacity), 0};
    stress.ring->head = stress.ring->tail = start_index;
    pthread_t producer;
    assert_int_equal(pthread_create(&producer, NULL, stress_producer, &stress), 0);
    uint64_t expected = 0, wrong = 0, value;
    while (expected < STRESS_ITEMS) {
        if (!ring_pop(stress.ring, &value)) {
            sched_yield();
            continue;
        }
        if (value != expected)
            wrong++;
        expected = value + 1;
    }
    assert_int_equal(pthread_join(producer, NULL), 0);
    assert_int_equal(wrong, 0);
    assert_int_equal(expected, STRESS_ITEMS);
    assert_false(ring_pop(stress.ring, &value));
    assert_true(ring_is_empty(stress.ring));
    free(stress.ring);
}

static void test_two_thread_stress(void **state)
{
    (void)state;
    stress_with_capacity(64, 0);
}

static void test_two_thread_stress_tiny_ring_across_wrap(void **state)
{
    (void)state;
    /* Two slots: the producer finds the ring full constantly; the indices
     * start 500,000 before 2^32 so they wrap halfway through. */
    stress_with_capacity(2, UINT32_MAX - 500000u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_init_rejects_bad_sizes),
        cmocka_unit_test(test_push_pop_order),
        cmocka_unit_test(test_full_push_changes_nothing),
        cmocka_unit_test(test_empty_pop_and_peek),
        cmocka_unit_test(test_peek_does_not_remove),
        cmocka_unit_test(test_larger_slots),
        cmocka_unit_test(test_wrap_around),
        cmocka_unit_test(test_full_across_wrap),
        cmocka_unit_test(test_two_thread_stress),
        cmocka_unit_test(test_two_thread_stress_tiny_ring_across_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
