/* test_pcid_table.c: a core's per-PCID record (kernel/pcid_table.h): a load keeps the PCID's
 * entries (CR3 bit 63) only when the root and both translation stamps match the last load
 * under that PCID, and any load records what it loaded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pcid_table.h"

#define ROOT 0x123000ull
#define OTHER_ROOT 0x456000ull
#define PCID 7

static void test_first_load_flushes(void **state)
{
    (void)state;
    struct pcid_loaded record = {0};
    uint64_t cr3 = pcid_load(&record, PCID, ROOT, 0, 0);
    assert_false(pcid_load_keeps(cr3));
    assert_int_equal(cr3, ROOT | PCID);
    assert_int_equal(record.root, ROOT);
}

static void test_unchanged_load_keeps(void **state)
{
    (void)state;
    struct pcid_loaded record = {0};
    pcid_load(&record, PCID, ROOT, 3, 5);
    uint64_t cr3 = pcid_load(&record, PCID, ROOT, 3, 5);
    assert_true(pcid_load_keeps(cr3));
    assert_int_equal(cr3, ROOT | PCID | CR3_NO_FLUSH);
}

static void test_a_bumped_stamp_flushes_once(void **state)
{
    (void)state;
    struct pcid_loaded record = {0};
    pcid_load(&record, PCID, ROOT, 3, 5);
    assert_false(pcid_load_keeps(pcid_load(&record, PCID, ROOT, 4, 5))); /* its own */
    assert_true(pcid_load_keeps(pcid_load(&record, PCID, ROOT, 4, 5)));
    assert_false(pcid_load_keeps(pcid_load(&record, PCID, ROOT, 4, 6))); /* the kernel's */
    assert_true(pcid_load_keeps(pcid_load(&record, PCID, ROOT, 4, 6)));
}

/* A slot reused by a new address space: another root under the same PCID. */
static void test_another_root_flushes(void **state)
{
    (void)state;
    struct pcid_loaded record = {0};
    pcid_load(&record, PCID, ROOT, 0, 0);
    assert_false(pcid_load_keeps(pcid_load(&record, PCID, OTHER_ROOT, 0, 0)));
    assert_int_equal(record.root, OTHER_ROOT);
    assert_false(pcid_load_keeps(pcid_load(&record, PCID, ROOT, 0, 0)));
}

/* Records of different PCIDs are independent: loading one leaves the other's. */
static void test_records_are_per_pcid(void **state)
{
    (void)state;
    struct pcid_loaded records[2] = {{0}};
    pcid_load(&records[0], 1, ROOT, 1, 1);
    pcid_load(&records[1], 2, OTHER_ROOT, 1, 1);
    assert_true(pcid_load_keeps(pcid_load(&records[0], 1, ROOT, 1, 1)));
    assert_true(pcid_load_keeps(pcid_load(&records[1], 2, OTHER_ROOT, 1, 1)));
    assert_int_equal(pcid_load(&records[1], 2, OTHER_ROOT, 1, 1) & 0xfff, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_load_flushes),
        cmocka_unit_test(test_unchanged_load_keeps),
        cmocka_unit_test(test_a_bumped_stamp_flushes_once),
        cmocka_unit_test(test_another_root_flushes),
        cmocka_unit_test(test_records_are_per_pcid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
