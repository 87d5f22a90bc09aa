/* route.c: `icatest route`: the routing the kernel writes into a control
 * ICA's page on arrival (arrival, origin, sender, the return stack) is its
 * own, whatever the holder scribbled there before sending, on one core (the
 * one-pass handover) and across cores; a stack left behind reads 0. */
#include "icatest.h"
#include <stdio.h>
#include <string.h>

/* The holder lies about the routing before it sends (the kernel reads none
 * of it: attachments and lends stay empty, as a request has them). */
static void scribble_routing(struct ica_control *page)
{
    page->arrival = 77;
    page->origin = 12345;
    page->sender = 54321;
    page->sender_rights = 0xffffffffu;
    page->return_depth = 99;
    for (uint32_t i = 0; i < ICA_MAX_RETURNS; i++)
        page->returns[i] = 0xdeadbeefu;
}

/* A result as the kernel writes it: from `sender`, for this process, with
 * nothing left on the return stack and nothing attached or lent. */
static bool result_routing_holds(const struct ica_control *page, long sender)
{
    bool ok = page->arrival == ICA_ARRIVED_AS_RESULT && page->origin == (uint32_t)process_id() &&
              page->sender == (uint32_t)sender && page->return_depth == 0 &&
              page->data_count == 0 && page->lent_count == 0;
    for (uint32_t i = 0; i < ICA_MAX_RETURNS; i++)
        ok &= page->returns[i] == 0;
    return ok;
}

/* One echo to `server` after scribbling; the result's sender must be `answerer`. */
static bool echo_routed(long server, long answerer, uint64_t control)
{
    request_prepare(control, IPC_ECHO);
    ipc_echo_of(ica_control_of(control))->value = 5;
    scribble_routing(ica_control_of(control));
    if (ica_request(server, control, ICA_SYNC) != 0 || ica_control_of(control)->result != 6)
        return false;
    return result_routing_holds(ica_control_of(control), answerer);
}

/* The chains on `core`: one server; two through the first (the result comes
 * back through it); two with the last answering directly. */
static bool routes_hold_on(uint32_t core, const char *where)
{
    char name[32], tail[16], head[16], arguments[48];
    bool ok = true;
    snprintf(name, sizeof name, "r1%s", where);
    long single = start_server("ipcserver", name, core, name);
    snprintf(tail, sizeof tail, "r2%s", where);
    long last = start_server("ipcserver", tail, core, tail);
    snprintf(head, sizeof head, "r3%s", where);
    snprintf(arguments, sizeof arguments, "%s %s via", head, tail);
    long via = start_server("ipcserver", arguments, core, head);
    snprintf(name, sizeof name, "r4%s", where);
    snprintf(arguments, sizeof arguments, "%s %s direct", name, tail);
    long direct = start_server("ipcserver", arguments, core, name);
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (single <= 0 || last <= 0 || via <= 0 || direct <= 0 || control < 0)
        return report_case(where, false, single, 1);
    char label[48];
    for (int round = 0; round < 3; round++) { /* the stacks left behind by earlier rounds */
        snprintf(label, sizeof label, "route_one_stage_%s", where);
        ok &= report_case(label, echo_routed(single, single, (uint64_t)control), round, round);
        snprintf(label, sizeof label, "route_back_through_first_%s", where);
        ok &= report_case(label, echo_routed(via, via, (uint64_t)control), round, round);
        snprintf(label, sizeof label, "route_direct_return_%s", where);
        ok &= report_case(label, echo_routed(direct, last, (uint64_t)control), round, round);
    }
    ica_free((uint64_t)control);
    ok &= stop_ipcserver(direct) == 0 && stop_ipcserver(via) == 0;
    ok &= stop_ipcserver(last) == 0 && stop_ipcserver(single) == 0;
    return ok;
}

int route_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    uint32_t here = (uint32_t)core_id();
    bool ok = routes_hold_on(here, "same_core");
    if (online_cores() > 1)
        ok &= routes_hold_on(here == 0 ? 1 : 0, "cross_core");
    return ok ? 0 : 1;
}
