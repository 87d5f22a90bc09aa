/* lend.c: `icatest lend`: a server lends a data ICA read-only with its answer
 * (how BLK can show a cached block without a copy). The requester reads it,
 * a write to it ends the writer, the lend ends at the requester's next
 * handover, and the lender cannot hand over or free an ICA while it is lent.
 * Then lend_on.c's cases: a borrowed block ICA lent on. */
#include "icatest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `lendwrite SERVER`: borrows a page, then writes to it: must be killed. */
int lend_write_role(char **argv)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (ipc_call_lend((long)strtoul(argv[0], NULL, 0), (uint64_t)control, 7) != 0)
        return 1;
    volatile uint8_t *lent = ica_address(ica_control_of((uint64_t)control)->lent[0]);
    lent[0] = 1;
    return 3; /* survived a write to a read-only lend */
}

static bool borrow_reads(long server, uint64_t control, uint8_t value)
{
    if (ipc_call_lend(server, control, value) != 0)
        return false;
    struct ica_control *page = ica_control_of(control);
    if (page->lent_count != 1)
        return false;
    const uint8_t *bytes = ica_address(page->lent[0]);
    return bytes[0] == value && bytes[4095] == value;
}

/* The lender's side: a lent ICA may be neither attached nor freed. */
static bool lender_rules_hold(long server)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    long data = ica_allocate(ICA_KIND_DATA, 4096);
    long borrower_control = ica_allocate(ICA_KIND_CONTROL, 4096);
    request_prepare((uint64_t)control, IPC_ECHO);
    request_lend((uint64_t)control, (uint64_t)data);
    bool ok = ica_request(server, (uint64_t)control, ICA_SYNC) == 0; /* lent, then given back */
    ok &= ica_free((uint64_t)data) == 0;                             /* the lend has ended */
    request_prepare((uint64_t)borrower_control, IPC_ECHO);
    request_lend((uint64_t)borrower_control, 12345); /* not an ICA the caller holds */
    ok &= ica_request(server, (uint64_t)borrower_control, ICA_SYNC) == -E_INVALID;
    ica_free((uint64_t)control);
    ica_free((uint64_t)borrower_control);
    return ok;
}

/* The lender ended while `control` still shows its page: the page lives on
 * (orphaned) until the lend ends, at the next handover, here to a second
 * server on this core (the kernel's one-pass handover when it is parked),
 * and is freed then (lend_no_leak counts it). */
static bool orphaned_lend_ends(uint64_t control)
{
    const uint8_t *bytes = ica_address(ica_control_of(control)->lent[0]);
    bool readable = bytes[0] == 0x43 && bytes[4095] == 0x43;
    long second = start_server("ipcserver", "lender2", (uint32_t)core_id(), "lender2");
    if (second <= 0)
        return false;
    request_prepare(control, IPC_ECHO);
    bool ended =
        ica_request(second, control, ICA_SYNC) == 0 && ica_control_of(control)->lent_count == 0;
    return stop_ipcserver(second) == 0 && readable && ended;
}

int lend_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    struct ica_stats start, now;
    ica_stats(&start);
    long server = start_server("ipcserver", "lender", online_cores() > 1 ? 1 : 0, "lender");
    bool ok = report_case("lend_start_server", server > 0, server, 1);
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    ok &= report_case("lend_read", borrow_reads(server, (uint64_t)control, 0x41), 1, 1);
    ok &= report_case("lend_again", borrow_reads(server, (uint64_t)control, 0x42), 1, 1);
    char arguments[32];
    snprintf(arguments, sizeof arguments, "lendwrite %ld", server);
    int code = run_helper(arguments, 0);
    ok &= report_case("lend_is_read_only", code == FAULT_EXIT_CODE, code, FAULT_EXIT_CODE);
    uint64_t old_lent = ica_control_of((uint64_t)control)->lent[0];
    request_prepare((uint64_t)control, IPC_ECHO);
    ica_request(server, (uint64_t)control, ICA_SYNC); /* a handover ends the lend */
    ok &= report_case("lend_ends_at_next_handover",
                      ica_control_of((uint64_t)control)->lent_count == 0, 0, 0);
    (void)old_lent;
    ok &= report_case("lender_rules", lender_rules_hold(server), 1, 1);
    ok &=
        report_case("lend_before_lender_ends", borrow_reads(server, (uint64_t)control, 0x43), 1, 1);
    ok &= report_case("lend_stop_server", stop_ipcserver(server) == 0, 0, 0);
    ok &= report_case("lend_orphan_ends_at_next_handover", orphaned_lend_ends((uint64_t)control), 1,
                      1);
    ica_free((uint64_t)control);
    ok &= lend_on_cases();
    bool no_leak = pools_return_to(&start, 2000, &now); /* before reading `now` */
    ok &= report_case("lend_no_leak", no_leak, now.data_free, start.data_free);
    return ok ? 0 : 1;
}
