/* test_nfit.c: the NFIT's persistent-memory ranges (lib/nfit.c) in tables
 * built as QEMU builds them: a range of another type first, then one range
 * per NVDIMM in slot order; and malformed tables refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <formica/errors.h>
#include <formica/nfit.h>

#define HEADER_BYTES 40
#define SPA_BYTES 56

static const uint8_t pmem_guid[16] = {0x79, 0xd3, 0xf0, 0x66, 0xf3, 0xb4, 0x74, 0x40,
                                      0xac, 0x43, 0x0d, 0x33, 0x18, 0xb7, 0x8c, 0xdb};

/* A control-region SPA range (another GUID) at `base`, then `ranges` PMEM
 * ranges: range i at base + (i + 1) * 4 GiB, (i + 1) * 16 MiB long. */
static size_t build_nfit(uint8_t *table, uint64_t base, int ranges)
{
    uint32_t length = HEADER_BYTES + (uint32_t)(1 + ranges) * SPA_BYTES;
    memset(table, 0, length);
    memcpy(table, "NFIT", 4);
    memcpy(table + 4, &length, 4);
    for (int i = 0; i <= ranges; i++) {
        uint8_t *spa = table + HEADER_BYTES + i * SPA_BYTES;
        spa[2] = SPA_BYTES;
        uint64_t start = base + ((uint64_t)i << 32), bytes = i ? (uint64_t)i << 24 : 4096;
        if (i > 0)
            memcpy(spa + 16, pmem_guid, 16);
        memcpy(spa + 32, &start, 8);
        memcpy(spa + 40, &bytes, 8);
    }
    return length;
}

static void test_ranges_in_table_order(void **state)
{
    (void)state;
    uint8_t table[512];
    uint64_t base = 0, bytes = 0;
    size_t length = build_nfit(table, 0x100000000ull, 2);
    assert_int_equal(nfit_pmem_range(table, length, 0, &base, &bytes), 0);
    assert_int_equal(base, 0x200000000ull);
    assert_int_equal(bytes, 16 << 20);
    assert_int_equal(nfit_pmem_range(table, length, 1, &base, &bytes), 0);
    assert_int_equal(base, 0x300000000ull);
    assert_int_equal(bytes, 32 << 20);
    assert_int_equal(nfit_pmem_range(table, length, 2, &base, &bytes), -E_NOT_FOUND);
}

static void test_other_types_and_empty_ranges_are_skipped(void **state)
{
    (void)state;
    uint8_t table[512];
    uint64_t base = 0, bytes = 0;
    size_t length = build_nfit(table, 0x100000000ull, 2);
    table[HEADER_BYTES + SPA_BYTES + 16] ^= 1; /* the first PMEM range loses its GUID */
    assert_int_equal(nfit_pmem_range(table, length, 0, &base, &bytes), 0);
    assert_int_equal(base, 0x300000000ull);
    memset(table + HEADER_BYTES + 2 * SPA_BYTES + 40, 0, 8); /* and the second its length */
    assert_int_equal(nfit_pmem_range(table, length, 0, &base, &bytes), -E_NOT_FOUND);
    length = build_nfit(table, 0x100000000ull, 1);
    table[HEADER_BYTES + SPA_BYTES] = 1; /* another structure type */
    assert_int_equal(nfit_pmem_range(table, length, 0, &base, &bytes), -E_NOT_FOUND);
}

static void test_malformed_tables_are_refused(void **state)
{
    (void)state;
    uint8_t table[512];
    uint64_t base = 0, bytes = 0;
    size_t length = build_nfit(table, 0x100000000ull, 1);
    assert_int_equal(nfit_pmem_range(table, 20, 0, &base, &bytes), -E_INVALID);
    assert_int_equal(nfit_pmem_range(table, length - 1, 0, &base, &bytes), -E_INVALID);
    table[HEADER_BYTES + 2] = 2; /* a structure shorter than its own header */
    assert_int_equal(nfit_pmem_range(table, length, 0, &base, &bytes), -E_INVALID);
    length = build_nfit(table, 0x100000000ull, 1);
    table[HEADER_BYTES + SPA_BYTES + 2] = 200; /* one that runs past the table */
    assert_int_equal(nfit_pmem_range(table, length, 0, &base, &bytes), -E_INVALID);
    length = build_nfit(table, 0x100000000ull, 1);
    memcpy(table, "SRAT", 4);
    assert_int_equal(nfit_pmem_range(table, length, 0, &base, &bytes), -E_INVALID);
    /* every truncation of a good table is refused or finds nothing, and reads nothing past it */
    length = build_nfit(table, 0x100000000ull, 2);
    for (size_t cut = 0; cut < length; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, table, cut);
        assert_true(nfit_pmem_range(copy, cut, 0, &base, &bytes) < 0);
        free(copy);
    }
}

/* Ranges listed out of address order are given by address. */
static void test_ranges_by_address(void **state)
{
    (void)state;
    uint8_t table[512];
    size_t length = build_nfit(table, 0x100000000ull, 3);
    uint64_t first = 0x100000000ull + (1ull << 32), third = 0x100000000ull + (3ull << 32);
    memcpy(table + HEADER_BYTES + 1 * SPA_BYTES + 32, &third, 8); /* range 0 is the highest */
    memcpy(table + HEADER_BYTES + 3 * SPA_BYTES + 32, &first, 8);
    uint64_t base = 0, bytes = 0;
    assert_int_equal(nfit_pmem_range_by_address(table, length, 0, &base, &bytes), 0);
    assert_int_equal(base, first);
    assert_int_equal(bytes, 3ull << 24);
    assert_int_equal(nfit_pmem_range_by_address(table, length, 2, &base, &bytes), 0);
    assert_int_equal(base, third);
    assert_int_equal(bytes, 1ull << 24);
    assert_int_equal(nfit_pmem_range_by_address(table, length, 3, &base, &bytes), -E_NOT_FOUND);
}

/* The boot option nvm=ROLE,... names each range's role in table order. */
static void test_roles_name_ranges_in_order(void **state)
{
    (void)state;
    assert_int_equal(nfit_role_index(NULL, "pager"), 0);
    assert_int_equal(nfit_role_index("", "pager"), 0);
    assert_int_equal(nfit_role_index("", "tier"), -E_NOT_FOUND);
    assert_int_equal(nfit_role_index("pager,tier", "pager"), 0);
    assert_int_equal(nfit_role_index("pager,tier", "tier"), 1);
    assert_int_equal(nfit_role_index("tier", "tier"), 0);
    assert_int_equal(nfit_role_index("tier", "pager"), -E_NOT_FOUND);
    assert_int_equal(nfit_role_index("tiers,tier", "tier"), 1);
    assert_int_equal(nfit_role_index("pager,", "tier"), -E_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_in_table_order),
        cmocka_unit_test(test_other_types_and_empty_ranges_are_skipped),
        cmocka_unit_test(test_malformed_tables_are_refused),
        cmocka_unit_test(test_roles_name_ranges_in_order),
        cmocka_unit_test(test_ranges_by_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
