/* test_memmap.c: host unit tests of mkernel/memmap.c, the normalization of
 * firmware memory maps: overlaps (reserved wins), merging, page shrinking,
 * zero-length and wrapping regions, unsorted input, real QEMU e820 maps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>
#include "memmap.h"

#define U MEMORY_USABLE
#define R MEMORY_RESERVED
#define ACPI MEMORY_ACPI_RECLAIMABLE
#define NVS MEMORY_ACPI_NVS
#define BAD MEMORY_BAD
#define CAPACITY 64

/* Normalizes `count` regions copied into a CAPACITY-sized map, checks the
 * result equals `expected` (expected_count entries) and returns it in `map`. */
static void check_normalize(const struct memory_region *input, size_t count,
                            const struct memory_region *expected, size_t expected_count,
                            struct memory_region *map)
{
    for (size_t i = 0; i < count; i++)
        map[i] = input[i];
    size_t result = memmap_normalize(map, count, CAPACITY);
    bool same = result == expected_count;
    for (size_t i = 0; same && i < result; i++)
        same = map[i].base == expected[i].base && map[i].length == expected[i].length &&
               map[i].type == expected[i].type;
    for (size_t i = 0; !same && i < result; i++)
        printf("    got [%zu] base %#llx length %#llx type %u\n", i,
               (unsigned long long)map[i].base, (unsigned long long)map[i].length, map[i].type);
    assert_int_equal(result, expected_count);
    for (size_t i = 0; i < expected_count; i++) {
        assert_int_equal(map[i].base, expected[i].base);
        assert_int_equal(map[i].length, expected[i].length);
        assert_int_equal(map[i].type, expected[i].type);
    }
}

#define CHECK(input, expected, map)                                                                \
    check_normalize(input, sizeof(input) / sizeof(input[0]), expected,                             \
                    sizeof(expected) / sizeof(expected[0]), map)

static void test_empty_map(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    assert_int_equal(memmap_normalize(map, 0, CAPACITY), 0);
    assert_int_equal(memmap_usable_bytes(map, 0), 0);
    assert_int_equal(memmap_usable_end(map, 0), 0);
}

static void test_reserved_inside_usable_splits_it(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {{0x0, 0x10000, U}, {0x4000, 0x2000, R}};
    const struct memory_region expected[] = {
        {0x0, 0x4000, U}, {0x4000, 0x2000, R}, {0x6000, 0xa000, U}};
    CHECK(input, expected, map);
    assert_int_equal(memmap_usable_bytes(map, 3), 0xe000);
    assert_int_equal(memmap_usable_end(map, 3), 0x10000);
}

static void test_reserved_wins_partial_overlap(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    /* Reserved listed first, overlapping the start and end of usable ranges. */
    const struct memory_region input[] = {
        {0x8000, 0x4000, R}, {0x0, 0xa000, U}, {0xb000, 0x5000, U}};
    const struct memory_region expected[] = {
        {0x0, 0x8000, U}, {0x8000, 0x4000, R}, {0xc000, 0x4000, U}};
    CHECK(input, expected, map);
}

static void test_reserved_covering_usable_removes_it(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {{0x2000, 0x1000, U}, {0x0, 0x10000, R}};
    const struct memory_region expected[] = {{0x0, 0x10000, R}};
    CHECK(input, expected, map);
    assert_int_equal(memmap_usable_bytes(map, 1), 0);
    assert_int_equal(memmap_usable_end(map, 1), 0);
}

static void test_type_precedence(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    /* usable < ACPI reclaimable < ACPI NVS < reserved < bad */
    const struct memory_region input[] = {{0x0, 0x50000, U},
                                          {0x10000, 0x40000, ACPI},
                                          {0x20000, 0x30000, NVS},
                                          {0x30000, 0x20000, R},
                                          {0x40000, 0x10000, BAD}};
    const struct memory_region expected[] = {{0x0, 0x10000, U},
                                             {0x10000, 0x10000, ACPI},
                                             {0x20000, 0x10000, NVS},
                                             {0x30000, 0x10000, R},
                                             {0x40000, 0x10000, BAD}};
    CHECK(input, expected, map);
}

static void test_adjacent_usable_merge(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {
        {0x0, 0x1000, U}, {0x1000, 0x2000, U}, {0x3000, 0x1000, U}, {0x2000, 0x3000, U}};
    const struct memory_region expected[] = {{0x0, 0x5000, U}};
    CHECK(input, expected, map);
}

static void test_adjacent_reserved_merge_and_gaps_kept(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {
        {0x0, 0x1000, U}, {0x2000, 0x1000, U}, {0x3000, 0x100, R}, {0x3100, 0xf00, R}};
    const struct memory_region expected[] = {
        {0x0, 0x1000, U}, {0x2000, 0x1000, U}, {0x3000, 0x1000, R}};
    CHECK(input, expected, map);
}

static void test_unaligned_usable_shrunk_to_pages(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {{0x1234, 0x5000, U},  /* -> 0x2000..0x6000 */
                                          {0x10001, 0x1ffe, U}, /* no whole page inside: dropped */
                                          {0x20800, 0x800, R},  /* reserved keeps its exact bytes */
                                          {0x30000, 0x1800, U}}; /* -> 0x30000..0x31000 */
    const struct memory_region expected[] = {
        {0x2000, 0x4000, U}, {0x20800, 0x800, R}, {0x30000, 0x1000, U}};
    CHECK(input, expected, map);
}

static void test_usable_next_to_unaligned_reserved(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    /* The usable remainder around an unaligned reserved hole loses the partial pages. */
    const struct memory_region input[] = {{0x0, 0x10000, U}, {0x4100, 0x100, R}};
    const struct memory_region expected[] = {
        {0x0, 0x4000, U}, {0x4100, 0x100, R}, {0x5000, 0xb000, U}};
    CHECK(input, expected, map);
}

static void test_zero_length_dropped(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {
        {0x5000, 0, R}, {0x0, 0x10000, U}, {0x3000, 0, R}, {0x20000, 0, U}};
    const struct memory_region expected[] = {{0x0, 0x10000, U}};
    CHECK(input, expected, map);
}

static void test_unsorted_input(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {
        {0x100000, 0x100000, U}, {0xf0000, 0x10000, R}, {0x0, 0x9f000, U}, {0x9f000, 0x1000, R}};
    const struct memory_region expected[] = {
        {0x0, 0x9f000, U}, {0x9f000, 0x1000, R}, {0xf0000, 0x10000, R}, {0x100000, 0x100000, U}};
    CHECK(input, expected, map);
}

static void test_region_wrapping_past_2_64_is_clipped(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {
        {0x1000, 0x1000, U},
        {0xffffffff00000000ull, 0x200000000ull, U}, /* would end at 2^64 + 2^32 */
    };
    const struct memory_region expected[] = {{0x1000, 0x1000, U},
                                             {0xffffffff00000000ull, 0xfffff000ull, U}};
    CHECK(input, expected, map);
    assert_int_equal(memmap_usable_end(map, 2), 0xfffffffffffff000ull);
    assert_int_equal(memmap_usable_bytes(map, 2), 0x1000 + 0xfffff000ull);
}

static void test_reserved_wrapping_past_2_64_is_clipped(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {{0xffffffffffff0000ull, 0x20000, R}};
    const struct memory_region expected[] = {{0xffffffffffff0000ull, 0xffff, R}};
    CHECK(input, expected, map);
}

static void test_usable_sliver_at_top_of_address_space_dropped(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    /* Less than a page at the very top: rounding its base up must not wrap to 0. */
    const struct memory_region input[] = {{0x0, 0x2000, U}, {0xfffffffffffff800ull, 0x1000, U}};
    const struct memory_region expected[] = {{0x0, 0x2000, U}};
    CHECK(input, expected, map);
    assert_int_equal(memmap_usable_end(map, 1), 0x2000);
}

/* `qemu -m 128M` with SeaBIOS, as reported by e820 (the brief's example). */
static void test_qemu_seabios_128m(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {{0x0, 0x9fc00, U},       {0x9fc00, 0x400, R},
                                          {0xf0000, 0x10000, R},   {0x100000, 0x7ee0000, U},
                                          {0x7fe0000, 0x20000, R}, {0xfffc0000, 0x40000, R}};
    const struct memory_region expected[] = {{0x0, 0x9f000, U},       {0x9fc00, 0x400, R},
                                             {0xf0000, 0x10000, R},   {0x100000, 0x7ee0000, U},
                                             {0x7fe0000, 0x20000, R}, {0xfffc0000, 0x40000, R}};
    CHECK(input, expected, map);
    assert_int_equal(memmap_usable_bytes(map, 6), 0x9f000 + 0x7ee0000);
    assert_int_equal(memmap_usable_end(map, 6), 0x7fe0000);
}

/* `qemu -m 8G` (q35-like): RAM split by the PCI hole, the rest above 4 GiB. */
static void test_qemu_8g_memory_above_4g(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY];
    const struct memory_region input[] = {{0x0, 0x9fc00, U},
                                          {0x9fc00, 0x400, R},
                                          {0xf0000, 0x10000, R},
                                          {0x100000, 0x7ff00000, U},
                                          {0x80000000, 0x0, R},
                                          {0xb0000000, 0x10000000, R},
                                          {0xfed1c000, 0x4000, R},
                                          {0xfeffc000, 0x4000, R},
                                          {0xfffc0000, 0x40000, R},
                                          {0x100000000ull, 0x180000000ull, U},
                                          {0xfd00000000ull, 0x300000000ull, R}};
    const struct memory_region expected[] = {{0x0, 0x9f000, U},
                                             {0x9fc00, 0x400, R},
                                             {0xf0000, 0x10000, R},
                                             {0x100000, 0x7ff00000, U},
                                             {0xb0000000, 0x10000000, R},
                                             {0xfed1c000, 0x4000, R},
                                             {0xfeffc000, 0x4000, R},
                                             {0xfffc0000, 0x40000, R},
                                             {0x100000000ull, 0x180000000ull, U},
                                             {0xfd00000000ull, 0x300000000ull, R}};
    CHECK(input, expected, map);
    assert_int_equal(memmap_usable_bytes(map, 10), 0x9f000 + 0x7ff00000 + 0x180000000ull);
    assert_int_equal(memmap_usable_end(map, 10), 0x280000000ull);
}

static void test_output_limited_to_capacity(void **state)
{
    (void)state;
    /* One usable range cut by two holes makes five regions; room for three. */
    struct memory_region map[8] = {{0x0, 0x10000, U}, {0x2000, 0x1000, R}, {0x8000, 0x1000, R}};
    size_t count = memmap_normalize(map, 3, 3);
    assert_true(count <= 3);
    assert_int_equal(map[0].base, 0x0);
    assert_int_equal(map[0].length, 0x2000);
    assert_int_equal(map[1].type, R);
    /* Whatever was kept must be sorted and must not overlap. */
    for (size_t i = 1; i < count; i++)
        assert_true(map[i - 1].base + map[i - 1].length <= map[i].base);
}

static void test_normalize_is_idempotent(void **state)
{
    (void)state;
    struct memory_region map[CAPACITY] = {{0x100000, 0x7ee0123, U}, {0x0, 0x9fc00, U},
                                          {0x7fe0000, 0x20000, R},  {0x9fc00, 0x400, R},
                                          {0xf0000, 0x10000, R},    {0x50000, 0x1000, ACPI}};
    size_t count = memmap_normalize(map, 6, CAPACITY);
    struct memory_region again[CAPACITY];
    for (size_t i = 0; i < count; i++)
        again[i] = map[i];
    assert_int_equal(memmap_normalize(again, count, CAPACITY), count);
    assert_memory_equal(again, map, count * sizeof(map[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_map),
        cmocka_unit_test(test_reserved_inside_usable_splits_it),
        cmocka_unit_test(test_reserved_wins_partial_overlap),
        cmocka_unit_test(test_reserved_covering_usable_removes_it),
        cmocka_unit_test(test_type_precedence),
        cmocka_unit_test(test_adjacent_usable_merge),
        cmocka_unit_test(test_adjacent_reserved_merge_and_gaps_kept),
        cmocka_unit_test(test_unaligned_usable_shrunk_to_pages),
        cmocka_unit_test(test_usable_next_to_unaligned_reserved),
        cmocka_unit_test(test_zero_length_dropped),
        cmocka_unit_test(test_unsorted_input),
        cmocka_unit_test(test_region_wrapping_past_2_64_is_clipped),
        cmocka_unit_test(test_reserved_wrapping_past_2_64_is_clipped),
        cmocka_unit_test(test_usable_sliver_at_top_of_address_space_dropped),
        cmocka_unit_test(test_qemu_seabios_128m),
        cmocka_unit_test(test_qemu_8g_memory_above_4g),
        cmocka_unit_test(test_output_limited_to_capacity),
        cmocka_unit_test(test_normalize_is_idempotent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
