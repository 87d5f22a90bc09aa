/* test_mapping_lend.c: the table of mapping lends (kernel/ica/mapping_lend_table.h)
 * on the host: claims near a block's home, finds by block, pid and address,
 * the range test munmap and exit use, a full probe run refused, clears that
 * free a slot for the next claim, claims racing from threads, and what a
 * fault ends and installs within the per-process bound and its account. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "mapping_lend_table.h"

#define BLOCK(index) ((3ull << 32) | (2ull << 24) | (index)) /* generation 3, kind 2 */
#define BASE 0x300000000000ull

static struct mapping_lend *table_new(void)
{
    struct mapping_lend *table = calloc(MAPPING_LENDS, sizeof(*table));
    assert_non_null(table);
    return table;
}

static void claims_and_finds(void **state)
{
    (void)state;
    struct mapping_lend *table = table_new();
    struct mapping_lend *first = mapping_lend_claim(table, BLOCK(5), 40, BASE, 0);
    struct mapping_lend *second =
        mapping_lend_claim(table, BLOCK(5), 41, BASE + 4096, MAPPING_LEND_WRITABLE);
    assert_non_null(first);
    assert_non_null(second);
    assert_ptr_not_equal(first, second);
    assert_ptr_equal(first, &table[mapping_lend_home(BLOCK(5))]); /* its home first */
    assert_ptr_equal(mapping_lend_find(table, BLOCK(5), 40, BASE), first);
    assert_ptr_equal(mapping_lend_find(table, BLOCK(5), 41, BASE + 4096), second);
    assert_int_equal(second->flags, MAPPING_LEND_WRITABLE);
    assert_null(mapping_lend_find(table, BLOCK(5), 40, BASE + 4096)); /* another address */
    assert_null(mapping_lend_find(table, BLOCK(6), 40, BASE));        /* another block */
    assert_null(mapping_lend_find(table, BLOCK(5), 42, BASE));        /* another mapper */
    free(table);
}

static void ranges_and_clears(void **state)
{
    (void)state;
    struct mapping_lend *table = table_new();
    struct mapping_lend *lend = mapping_lend_claim(table, BLOCK(9), 40, BASE + 8192, 0);
    assert_true(mapping_lend_in_range(lend, 40, BASE, BASE + 3 * 4096));
    assert_false(mapping_lend_in_range(lend, 40, BASE, BASE + 8192)); /* end excluded */
    assert_false(mapping_lend_in_range(lend, 41, BASE, BASE + 3 * 4096));
    mapping_lend_clear(lend);
    assert_int_equal(lend->pid, 0);
    assert_false(mapping_lend_in_range(lend, 40, BASE, BASE + 3 * 4096));
    assert_null(mapping_lend_find(table, BLOCK(9), 40, BASE + 8192));
    assert_ptr_equal(mapping_lend_claim(table, BLOCK(9), 41, BASE, 0), lend); /* free again */
    free(table);
}

static void a_full_probe_run_is_refused(void **state)
{
    (void)state;
    struct mapping_lend *table = table_new();
    for (uint32_t i = 0; i < MAPPING_LEND_PROBES; i++)
        assert_non_null(mapping_lend_claim(table, BLOCK(1), 40, BASE + i * 4096ull, 0));
    assert_null(mapping_lend_claim(table, BLOCK(1), 40, BASE + MAPPING_LEND_PROBES * 4096ull, 0));
    struct mapping_lend *last =
        mapping_lend_find(table, BLOCK(1), 40, BASE + (MAPPING_LEND_PROBES - 1) * 4096ull);
    assert_non_null(last); /* found at the far end of the run */
    mapping_lend_clear(last);
    assert_ptr_equal(mapping_lend_claim(table, BLOCK(1), 40, BASE, 0), last);
    free(table);
}

static void homes_wrap_around_the_table(void **state)
{
    (void)state;
    struct mapping_lend *table = table_new();
    uint64_t block = BLOCK(MAPPING_LENDS / 8 - 1); /* home at the table's last eight slots */
    for (uint32_t i = 0; i < 16; i++)
        assert_non_null(mapping_lend_claim(table, block, 40, BASE + i * 4096ull, 0));
    assert_int_equal(table[0].pid, 40); /* the run went on at slot 0 */
    assert_non_null(mapping_lend_find(table, block, 40, BASE + 15 * 4096ull));
    free(table);
}

struct racer {
    struct mapping_lend *table;
    uint32_t pid;
    uint32_t claimed;
};

static void *race(void *argument)
{
    struct racer *racer = argument;
    for (uint32_t i = 0; i < MAPPING_LEND_PROBES; i++)
        if (mapping_lend_claim(racer->table, BLOCK(77), racer->pid, BASE + i * 4096ull, 0))
            racer->claimed++;
    return NULL;
}

static void racing_claims_never_share_a_slot(void **state)
{
    (void)state;
    struct mapping_lend *table = table_new();
    struct racer racers[4];
    pthread_t threads[4];
    for (uint32_t i = 0; i < 4; i++) {
        racers[i] = (struct racer){table, 40 + i, 0};
        assert_int_equal(pthread_create(&threads[i], NULL, race, &racers[i]), 0);
    }
    uint32_t claimed = 0;
    for (uint32_t i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        claimed += racers[i].claimed;
    }
    assert_int_equal(claimed, MAPPING_LEND_PROBES); /* every slot of the run, once */
    for (uint32_t i = 0; i < 4; i++)
        for (uint32_t page = 0; page < MAPPING_LEND_PROBES; page++) {
            struct mapping_lend *lend =
                mapping_lend_find(table, BLOCK(77), 40 + i, BASE + page * 4096ull);
            if (lend != NULL)
                assert_int_equal(lend->block, BLOCK(77));
        }
    free(table);
}

/* What a fault ends of the process's own lends and then installs: the
 * per-process bound and the account's room (4 KiB a lend), whichever asks
 * more, never more than it holds. */
static void room_within_the_bound_and_the_account(void **state)
{
    (void)state;
    uint64_t unlimited = UINT64_MAX;
    assert_int_equal(mapping_lends_to_end(10, 4, unlimited), 0);
    assert_int_equal(mapping_lends_to_end(MAPPING_LENDS_PER_PROCESS, 4, unlimited), 4);
    assert_int_equal(mapping_lends_to_end(MAPPING_LENDS_PER_PROCESS - 1, 4, unlimited), 3);
    assert_int_equal(mapping_lends_installable(4, unlimited, 0), 4);
    /* an account with room for 1 more: 3 of its own end, all 4 fit */
    assert_int_equal(mapping_lends_to_end(100, 4, 1), 3);
    assert_int_equal(mapping_lends_installable(4, 1, 3), 4);
    /* both: the larger of the two */
    assert_int_equal(mapping_lends_to_end(MAPPING_LENDS_PER_PROCESS, 4, 2), 4);
    assert_int_equal(mapping_lends_to_end(MAPPING_LENDS_PER_PROCESS - 3, 4, 0), 4);
    /* holding 2 in a full account: both end, 2 of 4 fit */
    assert_int_equal(mapping_lends_to_end(2, 4, 0), 2);
    assert_int_equal(mapping_lends_installable(4, 0, 2), 2);
    /* holding none in a full account: nothing to end, nothing fits (-E_QUOTA) */
    assert_int_equal(mapping_lends_to_end(0, 1, 0), 0);
    assert_int_equal(mapping_lends_installable(1, 0, 0), 0);
    /* fewer ended than asked (some were in the answer's own range) */
    assert_int_equal(mapping_lends_installable(4, 1, 1), 2);
    assert_int_equal(mapping_lends_installable(4, UINT64_MAX - 1, 3), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(claims_and_finds),
        cmocka_unit_test(ranges_and_clears),
        cmocka_unit_test(a_full_probe_run_is_refused),
        cmocka_unit_test(homes_wrap_around_the_table),
        cmocka_unit_test(racing_claims_never_share_a_slot),
        cmocka_unit_test(room_within_the_bound_and_the_account),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
