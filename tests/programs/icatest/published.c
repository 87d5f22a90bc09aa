/* published.c: `icatest published`: a server's published region
 * (formica/published_region.h): refused to a process that is not an
 * instance of the name, its size limits, mapped writable for instance 0,
 * and freed with its last holder (the next one finds it zeroed). */
#include "icatest.h"
#include <formica/published_region.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUBLISHED_TEST_BYTES (3 * 4096)
#define PUBLISHED_PATTERN 0x5055424c49534844ull /* "PUBLISHD" */
#define REGION_WAS_WRITTEN_EXIT_CODE 4          /* the region was not zeroed */

/* `pubwrite NAME`: registers NAME (instance 0), maps its region: exits 0 if
 * it was zeroed, after writing the pattern into its first and last words. */
static int write_pattern_role(char **argv)
{
    if (server_register(argv[0]) != 0)
        return 1;
    long address = system_call_published_region(argv[0], PUBLISHED_TEST_BYTES);
    if (address != (long)PUBLISHED_REGION_BASE)
        return 2;
    volatile uint64_t *words = (volatile uint64_t *)address;
    size_t last = PUBLISHED_TEST_BYTES / 8 - 1;
    bool zeroed = words[0] == 0 && words[last] == 0;
    words[0] = words[last] = PUBLISHED_PATTERN;
    return zeroed ? 0 : REGION_WAS_WRITTEN_EXIT_CODE;
}

int published_role(const char *role, char **argv)
{
    if (strcmp(role, "pubwrite") == 0)
        return write_pattern_role(argv);
    return -1;
}

/* The refusals a registered instance 0 gets, and its writable mapping. */
static bool owner_cases(void)
{
    bool ok = true;
    long got = system_call_published_region("icapub", PUBLISHED_TEST_BYTES);
    ok &= report_case("published_unregistered_refused", got == -E_PERMISSION, got, -E_PERMISSION);
    got = server_register("icapub");
    ok &= report_case("published_registered", got == 0, got, 0);
    got = system_call_published_region("icapub", 0);
    ok &= report_case("published_size_zero", got == -E_INVALID, got, -E_INVALID);
    got = system_call_published_region("icapub", PUBLISHED_REGION_MAX_BYTES + 1);
    ok &= report_case("published_size_above_maximum", got == -E_INVALID, got, -E_INVALID);
    got = system_call_published_region("icaother", PUBLISHED_TEST_BYTES);
    ok &= report_case("published_other_name_refused", got == -E_PERMISSION, got, -E_PERMISSION);
    got = system_call_published_region("", PUBLISHED_TEST_BYTES);
    ok &= report_case("published_empty_name", got == -E_INVALID, got, -E_INVALID);
    got = system_call_published_region("icapub", PUBLISHED_TEST_BYTES);
    ok &= report_case("published_owner_maps", got == (long)PUBLISHED_REGION_BASE, got,
                      (long)PUBLISHED_REGION_BASE);
    if (got == (long)PUBLISHED_REGION_BASE) {
        volatile uint64_t *words = (volatile uint64_t *)got;
        bool zeroed = words[0] == 0;
        words[0] = PUBLISHED_PATTERN; /* writable: a fault would end the test here */
        ok &= report_case("published_owner_writes", zeroed && words[0] == PUBLISHED_PATTERN,
                          (long)zeroed, 1);
    }
    got = system_call_published_region("icapub", PUBLISHED_TEST_BYTES);
    ok &= report_case("published_mapped_twice", got == -E_BUSY, got, -E_BUSY);
    got = system_call_published_region("icapub", 2 * PUBLISHED_TEST_BYTES);
    ok &= report_case("published_other_size", got == -E_INVALID, got, -E_INVALID);
    return ok;
}

/* Two owners of one name in turn, no other holder: the second finds the
 * region zeroed (freed with the first), and its frames come back. */
static bool freed_with_last_holder(uint32_t core)
{
    struct ica_stats before, after;
    int first = run_helper("pubwrite icafree", core);
    ica_stats(&before); /* after a first run: what any helper's run leaves is counted */
    int second = run_helper("pubwrite icafree", core);
    bool ok = report_case("published_first_owner", first == 0, first, 0);
    ok &= report_case("published_freed_with_last_holder", second == 0, second, 0);
    ica_stats(&after);
    long kept = (long)(after.frames_used - before.frames_used);
    ok &= report_case("published_frames_back", kept <= 0, kept, 0);
    return ok;
}

int published_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    uint32_t core = online_cores() > 1 ? 1 : 0;
    bool ok = freed_with_last_holder(core);
    ok &= owner_cases();
    printf("icatest: published %s\n", ok ? "passed" : "FAILED");
    return ok ? 0 : 1;
}
