/* test_teramem_vems.c: host unit tests of lib/teramem_vems_rules.c, what a
 * vems region may be: only over an attached write-back tier (every other
 * state refused, with its name), no larger than the device behind it (the
 * device's size itself allowed), and its counters from the tier's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <formica/errors.h>
#include <formica/teramem_vems.h>

static struct blk_tier_report attached(uint64_t disk_bytes)
{
    return (struct blk_tier_report){
        .state = BLK_TIER_ATTACHED, .disk_bytes = disk_bytes, .nvm_bytes = 6 << 20};
}

static void test_a_region_up_to_the_device_is_allowed(void **state)
{
    (void)state;
    char why[200] = "stale";
    struct blk_tier_report tier = attached(64ull << 20);
    assert_int_equal(teramem_vems_check(&tier, 16ull << 20, why, sizeof why), 0);
    assert_string_equal(why, "");
    assert_int_equal(teramem_vems_check(&tier, 64ull << 20, why, sizeof why), 0);
}

static void test_a_region_larger_than_the_device_is_refused(void **state)
{
    (void)state;
    char why[200];
    struct blk_tier_report tier = attached(64ull << 20);
    assert_int_equal(teramem_vems_check(&tier, (64ull << 20) + 4096, why, sizeof why), -E_TOO_BIG);
    assert_non_null(strstr(why, "larger than the device behind the tier (65536 KiB)"));
    assert_int_equal(teramem_vems_check(&tier, 0, why, sizeof why), -E_INVALID);
    tier.write_through = 1; /* its lines are never mapped writable */
    assert_int_equal(teramem_vems_check(&tier, 4096, why, sizeof why), -E_INVALID);
    assert_non_null(strstr(why, "write-back tier"));
}

static void test_no_attached_tier_is_refused_by_its_state(void **state)
{
    (void)state;
    const struct {
        uint32_t state;
        const char *word;
    } cases[] = {{BLK_TIER_NONE, "none"},
                 {BLK_TIER_REFUSED, "refused"},
                 {BLK_TIER_DETACHED, "detached"},
                 {BLK_TIER_TOO_SMALL, "too-small"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[200];
        struct blk_tier_report tier = attached(64ull << 20);
        tier.state = cases[i].state;
        assert_int_equal(teramem_vems_check(&tier, 4096, why, sizeof why), -E_NOT_FOUND);
        assert_non_null(strstr(why, "needs BLK's NVM tier"));
        assert_non_null(strstr(why, cases[i].word));
    }
}

static void test_counters_are_the_tiers_between_two_reports(void **state)
{
    (void)state;
    struct blk_tier_report before = attached(64ull << 20), after = before;
    before.fills = 100;
    before.writeback_bytes = 8192;
    after.fills = 350;
    after.writeback_bytes = 8192 + 40 * 4096;
    struct teramem_stats stats;
    memset(&stats, 0xff, sizeof stats);
    teramem_vems_counters(&before, &after, &stats);
    assert_int_equal(stats.swap_in_blocks, 250);
    assert_int_equal(stats.bytes_in, 250 * 4096);
    assert_int_equal(stats.swap_out_blocks, 40);
    assert_int_equal(stats.bytes_out, 40 * 4096);
    assert_int_equal(stats.resident_bytes, 0);
    assert_int_equal(stats.clean_drops, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_region_up_to_the_device_is_allowed),
        cmocka_unit_test(test_a_region_larger_than_the_device_is_refused),
        cmocka_unit_test(test_no_attached_tier_is_refused_by_its_state),
        cmocka_unit_test(test_counters_are_the_tiers_between_two_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
