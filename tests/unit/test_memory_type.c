/* test_memory_type.c: the memory type of a physical range from MTRR values
 * (mkernel/memory_type.c): the set-up SeaBIOS gives QEMU (WB by default, the
 * PCI hole below 4 GiB UC), the SDM's overlap rules (UC wins, WT over WB),
 * MTRRs off or absent, a range across two types; and IA32_PAT's entries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "memory_type.h"

#define VALID (1ull << 11)
#define ENABLED (1ull << 11)
#define GIB (1ull << 30)
#define MIB (1ull << 20)

/* A variable range of `bytes` (a power of two) at `base`, with 40 physical bits. */
static void set_range(struct mtrr_state *mtrrs, int i, uint64_t base, uint64_t bytes,
                      enum memory_type type)
{
    mtrrs->base[i] = base | type;
    mtrrs->mask[i] = (~(bytes - 1) & ((1ull << 40) - 1)) | VALID;
}

/* What SeaBIOS writes under QEMU: default WB, 0xc0000000-0xffffffff UC. */
static struct mtrr_state seabios(void)
{
    struct mtrr_state mtrrs = {.present = true,
                               .capabilities = 8 | (1 << 8) | (1 << 10),
                               .default_type = ENABLED | (1 << 10) | MEMORY_WB,
                               .physical_bits = 40};
    set_range(&mtrrs, 0, 3 * GIB, GIB, MEMORY_UC);
    return mtrrs;
}

static void test_qemu_nvdimm_above_4_gib_is_write_back(void **state)
{
    (void)state;
    struct mtrr_state mtrrs = seabios();
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB, 64 * MIB), MEMORY_WB);
    assert_int_equal(mtrr_range_type(&mtrrs, 3 * GIB + 16 * MIB, 16 * MIB), MEMORY_UC);
    assert_int_equal(mtrr_range_type(&mtrrs, 2 * GIB, 2 * GIB), MEMORY_MIXED);
    assert_int_equal(mtrr_range_type(&mtrrs, 2 * GIB, GIB), MEMORY_WB); /* ends where UC starts */
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB - 4096, 8192), MEMORY_MIXED);
}

static void test_overlaps_follow_the_sdm(void **state)
{
    (void)state;
    struct mtrr_state mtrrs = seabios();
    set_range(&mtrrs, 1, 4 * GIB, GIB, MEMORY_WT);
    set_range(&mtrrs, 2, 4 * GIB, 2 * GIB, MEMORY_WB);
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB, 64 * MIB), MEMORY_WT); /* WT over WB */
    assert_int_equal(mtrr_range_type(&mtrrs, 5 * GIB, 64 * MIB), MEMORY_WB);
    set_range(&mtrrs, 3, 4 * GIB, 4096 * 16, MEMORY_UC);
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB, 4096), MEMORY_UC); /* UC wins */
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB, 64 * MIB), MEMORY_MIXED);
    set_range(&mtrrs, 4, 6 * GIB, GIB, MEMORY_WC);
    set_range(&mtrrs, 5, 6 * GIB, GIB, MEMORY_WB);
    assert_int_equal(mtrr_range_type(&mtrrs, 6 * GIB, MIB), MEMORY_UNDEFINED);
    mtrrs.mask[4] &= ~VALID, mtrrs.mask[5] &= ~VALID; /* not valid: not read */
    assert_int_equal(mtrr_range_type(&mtrrs, 6 * GIB, MIB), MEMORY_WB);
    mtrrs.capabilities = 2; /* ranges past VCNT are not read */
    set_range(&mtrrs, 2, 0, 4096, MEMORY_UC);
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB, MIB), MEMORY_WT);
}

static void test_mtrrs_off_or_absent(void **state)
{
    (void)state;
    struct mtrr_state mtrrs = seabios();
    mtrrs.default_type &= ~ENABLED;
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB, MIB), MEMORY_UC);
    mtrrs = seabios();
    mtrrs.default_type = ENABLED | MEMORY_UC;
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB, MIB), MEMORY_UC); /* the default type */
    struct mtrr_state none = {.present = false};
    assert_int_equal(mtrr_range_type(&none, 4 * GIB, MIB), MEMORY_WB);
    mtrrs = seabios();
    mtrrs.physical_bits = 0; /* not reported: 36 bits */
    set_range(&mtrrs, 0, 3 * GIB, GIB, MEMORY_UC);
    assert_int_equal(mtrr_range_type(&mtrrs, 4 * GIB, MIB), MEMORY_WB);
}

static void test_pat_entries(void **state)
{
    (void)state;
    uint64_t reset = 0x0007040600070406ull;
    assert_int_equal(pat_entry(reset, 0), MEMORY_WB);
    assert_int_equal(pat_entry(reset, 1), MEMORY_WT);
    assert_int_equal(pat_entry(reset, 2), MEMORY_UC_MINUS);
    assert_int_equal(pat_entry(reset, 3), MEMORY_UC);
    assert_int_equal(pat_entry(reset, 7), MEMORY_UC);
    assert_int_equal(pat_entry(0x0000000000000001ull, 0), MEMORY_WC); /* Linux puts WC in entry 1 */
    assert_string_equal(memory_type_name(MEMORY_WB), "WB");
    assert_string_equal(memory_type_name(MEMORY_UC_MINUS), "UC-");
    assert_string_equal(memory_type_name(MEMORY_MIXED), "mixed");
    assert_string_equal(memory_type_name((enum memory_type)3), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qemu_nvdimm_above_4_gib_is_write_back),
        cmocka_unit_test(test_overlaps_follow_the_sdm),
        cmocka_unit_test(test_mtrrs_off_or_absent),
        cmocka_unit_test(test_pat_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
