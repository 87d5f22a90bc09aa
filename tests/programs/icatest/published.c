/* published.c: `icatest published`: a server's published region
 * (formica/published_region.h): refused to a process that is not an
 * instance of the name, its size limits, mapped writable for instance 0 and
 * read-only for instance 1 (whose write faults), kept for the next owner
 * while a reader holds it and freed with its last holder (the next one
 * finds it zeroed). And ICA_KEEP_SENDER, which the instances' forwards
 * use, is refused between servers of different names. */
#include "icatest.h"
#include <formica/instance.h>
#include <formica/published_region.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUBLISHED_TEST_BYTES (256 * 4096)       /* 256 frames: their return is seen */
#define PUBLISHED_PATTERN 0x5055424c49534844ull /* "PUBLISHD" */
#define REGION_WAS_WRITTEN_EXIT_CODE 4          /* the region was not zeroed */
#define PATTERN_MISSING_EXIT_CODE 5             /* a reader did not see the owner's write */

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

/* `pubread NAME PARENT`: registers NAME as instance 1, maps its region and
 * tells PARENT; once told back, checks the owner's pattern is there, then
 * writes into the region: the write must end it (FAULT_EXIT_CODE). */
static int read_pattern_role(char **argv)
{
    long parent = (long)strtoul(argv[1], NULL, 0);
    if (server_register_instance(argv[0], 1) != 0)
        return 1;
    long address = system_call_published_region(argv[0], PUBLISHED_TEST_BYTES);
    notify(parent);
    if (address != (long)PUBLISHED_REGION_BASE)
        return 2;
    await_notification();
    volatile uint64_t *words = (volatile uint64_t *)address;
    if (words[0] != PUBLISHED_PATTERN)
        return PATTERN_MISSING_EXIT_CODE;
    words[1] = 1; /* read-only for an instance other than 0 */
    return 0;
}

int published_role(const char *role, char **argv)
{
    if (strcmp(role, "pubwrite") == 0)
        return write_pattern_role(argv);
    if (strcmp(role, "pubread") == 0)
        return read_pattern_role(argv);
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
    int first = run_helper("pubwrite icafree", core);
    bool ok = report_case("published_first_owner", first == 0, first, 0);
    /* Its frames came back: fewer than the region's are still in use after
     * a later run (a registration may keep a few of its own, such as its
     * request rings). The count is the whole machine's, so a server that
     * starts meanwhile (FS's mount, under a loaded host) can add to one
     * round; a region that is not freed adds to every round. */
    long region_frames = PUBLISHED_TEST_BYTES / 4096;
    long kept = 0;
    int later = 0;
    for (int round = 0; round < 3; round++) {
        struct ica_stats before, after;
        ica_stats(&before);
        later = run_helper("pubwrite icafree", core);
        ica_stats(&after);
        kept = (long)(after.frames_used - before.frames_used);
        if (later != 0 || kept < region_frames)
            break;
    }
    ok &= report_case("published_freed_with_last_holder", later == 0, later, 0);
    ok &= report_case("published_frames_back", kept < region_frames, kept, 0);
    return ok;
}

/* A reader (instance 1) holds the region while two owners come in turn:
 * the second finds it as the first left it; the reader sees the owner's
 * write, and its own write faults. */
static bool kept_while_a_reader_holds_it(uint32_t core)
{
    char arguments[64];
    snprintf(arguments, sizeof arguments, "pubread icakeep %ld", process_id());
    long reader = spawn("icatest", arguments, core, PRIORITY_APPLICATION);
    if (reader < 0)
        return report_case("published_reader_started", false, reader, 0);
    await_notification();
    int first = run_helper("pubwrite icakeep", core);
    int second = run_helper("pubwrite icakeep", core);
    notify(reader);
    int code = -1;
    wait_process(reader, &code);
    bool ok = report_case("published_owner_with_reader", first == 0, first, 0);
    ok &= report_case("published_kept_for_next_owner", second == REGION_WAS_WRITTEN_EXIT_CODE,
                      second, REGION_WAS_WRITTEN_EXIT_CODE);
    ok &= report_case("published_reader_write_faults", code == FAULT_EXIT_CODE, code,
                      FAULT_EXIT_CODE);
    return ok;
}

/* A forward with ICA_KEEP_SENDER from a server (icatest as "icapub") to
 * a server of another name (ipcserver "pubecho") is refused, the request
 * still held; a plain forward of it goes. */
static bool keep_sender_needs_the_same_name(uint32_t core)
{
    long echo = start_server("ipcserver", "pubecho", core, "pubecho");
    if (echo < 0)
        return report_case("published_echo_started", false, echo, 0);
    char arguments[64];
    snprintf(arguments, sizeof arguments, "flood %ld 1 %ld", process_id(), process_id());
    long client = spawn("icatest", arguments, core, PRIORITY_APPLICATION);
    await_notification(); /* its request is in our ring */
    long request = ica_receive_within(0, 3000);
    bool ok = report_case("published_request_received", request > 0, request, 1);
    if (request > 0) {
        long refused = ica_forward(echo, (uint64_t)request, ICA_KEEP_SENDER);
        ok &= report_case("published_keep_sender_other_name", refused == -E_PERMISSION, refused,
                          -E_PERMISSION);
        ok &= report_case("published_refused_forward_kept", ica_held((uint64_t)request), 0, 0);
        long sent = ica_forward(echo, (uint64_t)request, 0);
        ok &= report_case("published_plain_forward", sent == 0, sent, 0);
    }
    notify(client);
    wait_process(client, NULL);
    stop_ipcserver(echo);
    return ok;
}

int published_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    uint32_t core = online_cores() > 1 ? 1 : 0;
    bool ok = freed_with_last_holder(core);
    ok &= kept_while_a_reader_holds_it(core);
    ok &= owner_cases();
    ok &= keep_sender_needs_the_same_name(core);
    printf("icatest: published %s\n", ok ? "passed" : "FAILED");
    return ok ? 0 : 1;
}
