/* test_nvme_prp.c: host unit tests of servers/disk/nvme_prp.c, the PRP
 * entries of an NVMe command: one page, two pages, a PRP list (aligned and
 * starting inside a page), the list's limit, and refused buffers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "nvme_prp.h"

#define PAGE NVME_PAGE_BYTES
#define LIST_PHYSICAL 0x7000000ull

static uint64_t list[NVME_PRP_LIST_ENTRIES + 1];

static struct nvme_prp filled(uint64_t physical, uint64_t bytes)
{
    struct nvme_prp prp;
    memset(list, 0xee, sizeof(list));
    assert_int_equal(
        nvme_prp_fill(physical, bytes, list, LIST_PHYSICAL, NVME_PRP_LIST_ENTRIES, &prp), 0);
    assert_int_equal(prp.prp1, physical);
    return prp;
}

static void refused(uint64_t physical, uint64_t bytes, uint64_t list_physical, unsigned capacity)
{
    struct nvme_prp prp;
    assert_int_equal(nvme_prp_fill(physical, bytes, list, list_physical, capacity, &prp), -1);
}

static void test_one_page_needs_no_prp2(void **state)
{
    (void)state;
    struct nvme_prp prp = filled(0x100000, 512);
    assert_int_equal(prp.prp2, 0);
    prp = filled(0x100000, PAGE);
    assert_int_equal(prp.prp2, 0);
    prp = filled(0x100e00, 512); /* the last sector of a page */
    assert_int_equal(prp.prp2, 0);
    assert_int_equal(prp.list_entries, 0);
}

static void test_two_pages_put_the_second_in_prp2(void **state)
{
    (void)state;
    struct nvme_prp prp = filled(0x100000, 2 * PAGE);
    assert_int_equal(prp.prp2, 0x101000);
    prp = filled(0x100e00, 1024); /* crosses one page boundary */
    assert_int_equal(prp.prp2, 0x101000);
    assert_int_equal(prp.list_entries, 0);
    assert_int_equal(list[0], 0xeeeeeeeeeeeeeeeeull); /* the list is untouched */
}

static void test_more_pages_use_the_list(void **state)
{
    (void)state;
    struct nvme_prp prp = filled(0x200000, 64 * 1024); /* 16 pages */
    assert_int_equal(prp.prp2, LIST_PHYSICAL);
    assert_int_equal(prp.list_entries, 15);
    for (unsigned i = 0; i < 15; i++)
        assert_int_equal(list[i], 0x201000 + i * PAGE);
    assert_int_equal(list[15], 0xeeeeeeeeeeeeeeeeull);
}

static void test_an_offset_adds_a_page(void **state)
{
    (void)state;
    struct nvme_prp prp = filled(0x200200, 3 * PAGE); /* touches 4 pages */
    assert_int_equal(prp.prp2, LIST_PHYSICAL);
    assert_int_equal(prp.list_entries, 3);
    assert_int_equal(list[0], 0x201000);
    assert_int_equal(list[2], 0x203000);
}

static void test_the_list_has_a_limit(void **state)
{
    (void)state;
    struct nvme_prp prp = filled(0x400000, (uint64_t)(NVME_PRP_LIST_ENTRIES + 1) * PAGE);
    assert_int_equal(prp.list_entries, NVME_PRP_LIST_ENTRIES);
    assert_int_equal(list[NVME_PRP_LIST_ENTRIES - 1], 0x400000 + NVME_PRP_LIST_ENTRIES * PAGE);
    refused(0x400000, (uint64_t)(NVME_PRP_LIST_ENTRIES + 2) * PAGE, LIST_PHYSICAL,
            NVME_PRP_LIST_ENTRIES);
    refused(0x400000, 5 * PAGE, LIST_PHYSICAL, 3);
}

static void test_bad_buffers_are_refused(void **state)
{
    (void)state;
    refused(0x100000, 0, LIST_PHYSICAL, NVME_PRP_LIST_ENTRIES);            /* empty */
    refused(0x100002, 512, LIST_PHYSICAL, NVME_PRP_LIST_ENTRIES);          /* not dword aligned */
    refused(0x100000, 3 * PAGE, LIST_PHYSICAL + 8, NVME_PRP_LIST_ENTRIES); /* list misaligned */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_page_needs_no_prp2),
        cmocka_unit_test(test_two_pages_put_the_second_in_prp2),
        cmocka_unit_test(test_more_pages_use_the_list),
        cmocka_unit_test(test_an_offset_adds_a_page),
        cmocka_unit_test(test_the_list_has_a_limit),
        cmocka_unit_test(test_bad_buffers_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
