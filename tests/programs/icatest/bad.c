/* bad.c: `icatest bad`: every bad input of issue 4 gets its defined error
 * code (or, for memory a process does not hold, a page fault that ends only
 * that process) while the servers and the kernel go on. One @json per case. */
#include "icatest.h"
#include <formica/instance.h>
#include <stdio.h>

#define FILL_BY_HELPER 20 /* of the 64 slots of the sink's ring for this core */
#define ACCOUNT_SHARE 32  /* of them, what one quota account may hold (ICA_RING_SHARE) */
#define WAIT_SEEN_PATIENCE_MS 3000
#define FLOOD_REQUESTS 60
#define SERVED_MEANWHILE 100
#define COLLECT_PATIENCE_MS 3000
#define SEND_ATTEMPTS 64 /* more than the ring can still take */

struct setup {
    long echo; /* ipcserver "be" */
    uint32_t server_core, my_core;
    bool all_ok;
};

static void expect(struct setup *setup, const char *name, long got, long want)
{
    setup->all_ok &= report_case(name, got == want, got, want);
}

static uint64_t new_control(void)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control >= 0)
        request_prepare((uint64_t)control, IPC_ECHO);
    return (uint64_t)control;
}

static void forged_ids(struct setup *setup)
{
    uint64_t control = (uint64_t)ICA_KIND_CONTROL << 24;
    expect(setup, "forged_generation",
           ica_request(setup->echo, 0x7777ull << 32 | control | 3, ICA_SYNC), -E_INVALID);
    expect(setup, "forged_index",
           ica_request(setup->echo, 1ull << 32 | control | ICA_CONTROL_SLOTS, ICA_SYNC),
           -E_INVALID);
    expect(setup, "forged_kind", ica_request(setup->echo, 1ull << 32 | 9ull << 24, ICA_SYNC),
           -E_INVALID);
}

static void stale_id(struct setup *setup)
{
    uint64_t control = new_control();
    ica_free(control);
    expect(setup, "stale_id_request", ica_request(setup->echo, control, ICA_SYNC), -E_INVALID);
    expect(setup, "stale_id_free", ica_free(control), -E_INVALID);
}

/* An ICA the caller handed over is not the caller's until its result is collected. */
static void travelling_not_held(struct setup *setup)
{
    uint64_t control = new_control();
    ipc_echo_of(ica_control_of(control))->value = 7;
    ica_request(setup->echo, control, 0);
    expect(setup, "travelling_not_held", ica_request(setup->echo, control, ICA_SYNC),
           -E_PERMISSION);
    long back = ica_collect(0);
    expect(setup, "travelling_result_collected",
           back == (long)control ? ica_control_of(control)->result : back, 8);
    ica_free(control);
}

static void held_by_other_process(struct setup *setup)
{
    uint64_t control = new_control();
    long data = ica_allocate(ICA_KIND_DATA, 4096);
    char arguments[ARGUMENTS_BYTES];
    snprintf(arguments, sizeof arguments, "use 0x%lx 0x%lx %ld", control, data, setup->echo);
    expect(setup, "held_by_other_process", run_helper(arguments, setup->my_core), 0);
    expect(setup, "held_by_other_process_still_mine", ipc_call_echo(setup->echo, control, 1), 2);
    ica_free(control);
    ica_free((uint64_t)data);
}

static void missing_servers(struct setup *setup)
{
    uint64_t control = new_control();
    expect(setup, "no_such_server", ica_request(250, control, ICA_SYNC), -E_NOT_FOUND);
    expect(setup, "not_a_server", ica_request(1, control, ICA_SYNC), -E_NOT_FOUND);
    long gone = start_server("ipcserver", "bgone", setup->server_core, "bgone");
    expect(setup, "exited_server_stopped", stop_ipcserver(gone), 0);
    expect(setup, "exited_server", ica_request(gone, control, ICA_SYNC), -E_NOT_FOUND);
    expect(setup, "exited_server_ica_still_held", ipc_call_echo(setup->echo, control, 2), 3);
    ica_free(control);
}

static void malformed_control(struct setup *setup)
{
    uint64_t control = new_control();
    long data = ica_allocate(ICA_KIND_DATA, 4096);
    struct ica_control *page = ica_control_of(control);
    page->magic = 0xdeadbeef;
    expect(setup, "malformed_magic", ica_request(setup->echo, control, ICA_SYNC), -E_INVALID);
    page->magic = ICA_CONTROL_MAGIC;
    page->data_count = 9;
    expect(setup, "malformed_data_count", ica_request(setup->echo, control, ICA_SYNC), -E_INVALID);
    page->data_count = 2;
    page->data[0] = page->data[1] = (uint64_t)data;
    expect(setup, "malformed_same_data_twice", ica_request(setup->echo, control, ICA_SYNC),
           -E_INVALID);
    expect(setup, "malformed_ica_still_held", ipc_call_echo(setup->echo, control, 3), 4);
    ica_free(control);
    ica_free((uint64_t)data);
}

/* Results (and -E_SERVER_ENDED answers) that come back within the patience time. */
static long collect_not_found(long expected)
{
    long count = 0;
    for (long waited = 0; count < expected && waited < COLLECT_PATIENCE_MS;) {
        long control = ica_collect(ICA_NO_WAIT);
        if (control < 0) {
            sleep_ms(1);
            waited++;
            continue;
        }
        struct ica_control *page = ica_control_of((uint64_t)control);
        count += page->result == -E_SERVER_ENDED && page->arrival == ICA_ARRIVED_AS_RESULT;
        ica_free((uint64_t)control);
    }
    return count;
}

/* Sends with ICA_NO_WAIT until the sink's ring for this core refuses (our
 * account's share of it is full); how many went in. */
static long send_until_busy(struct setup *setup, long sink, uint64_t *refused)
{
    for (long sent = 0; sent < SEND_ATTEMPTS; sent++) {
        uint64_t control = new_control();
        long error = ica_request(sink, control, ICA_NO_WAIT);
        if (error != 0) {
            expect(setup, "ring_full_error", error, -E_BUSY);
            *refused = control;
            return sent;
        }
    }
    return -1;
}

/* Whether process `pid` waits for room in a server's ring (ps's wait reason). */
static bool waits_for_room(long pid)
{
    static struct process_info processes[PROCESS_LIST_MAX];
    long count = process_list(processes, PROCESS_LIST_MAX);
    for (long i = 0; i < count; i++)
        if (processes[i].pid == (uint32_t)pid)
            return processes[i].state == PROCESS_WAITING &&
                   processes[i].wait_reason == PROCESS_WAIT_ICA_ROOM;
    return false;
}

static bool seen_waiting_for_room(long pid)
{
    for (long waited = 0; waited < WAIT_SEEN_PATIENCE_MS; waited++) {
        if (waits_for_room(pid))
            return true;
        sleep_ms(1);
    }
    return false;
}

/* A sink never receives: 20 requests from a helper and 12 from us fill our
 * account's half of its ring for this core; the next one, sent with
 * ICA_NO_WAIT, gets -E_BUSY, one sent without waits for room (here, until
 * the sink ends: -E_NOT_FOUND), and a combined call's forward with
 * ICA_TIMEOUT waits its 50 ms, then gets -E_BUSY. When the sink ends, all 32 go back to
 * their requesters with -E_SERVER_ENDED. */
static void full_ring_and_pending_at_exit(struct setup *setup)
{
    long sink = start_server("icatest", "sink bsink", setup->server_core, "bsink");
    char arguments[ARGUMENTS_BYTES];
    snprintf(arguments, sizeof arguments, "fill %ld %d %ld", sink, FILL_BY_HELPER, process_id());
    long helper = spawn("icatest", arguments, setup->my_core, PRIORITY_APPLICATION);
    await_notification();
    uint64_t refused = 0;
    long sent = send_until_busy(setup, sink, &refused);
    expect(setup, "ring_share_full_after", sent, ACCOUNT_SHARE - FILL_BY_HELPER);
    expect(setup, "ring_full_ica_still_held", ipc_call_echo(setup->echo, refused, 4), 5);
    ica_free(refused);
    snprintf(arguments, sizeof arguments, "waitroom %ld", sink);
    long waiter = spawn("icatest", arguments, setup->my_core, PRIORITY_APPLICATION);
    expect(setup, "ring_full_sender_waits", seen_waiting_for_room(waiter), 1);
    snprintf(arguments, sizeof arguments, "timedforward %ld tfwd", sink);
    long forwarder = start_server("icatest", arguments, setup->my_core, "tfwd");
    uint64_t control = new_control();
    long timed = forwarder < 0 ? forwarder : ica_request(forwarder, control, ICA_SYNC);
    expect(setup, "ring_full_timed_forward_busy",
           timed == 0 ? ica_control_of(control)->result : timed, 0);
    ica_free(control);
    int forwarder_code = -1;
    if (forwarder > 0)
        wait_process(forwarder, &forwarder_code);
    notify(sink);
    int code = -1;
    wait_process(sink, &code);
    expect(setup, "pending_server_exited", code, 0);
    wait_process(waiter, &code);
    expect(setup, "ring_wait_ends_with_the_server", code, 0);
    expect(setup, "pending_returned_not_found", collect_not_found(sent), sent);
    notify(helper);
    wait_process(helper, &code);
    expect(setup, "pending_returned_to_other_requester", code, 0);
}

/* A requester that never collects its results does not stop the server. */
static void undrained_results(struct setup *setup)
{
    char arguments[ARGUMENTS_BYTES];
    snprintf(arguments, sizeof arguments, "flood %ld %d %ld", setup->echo, FLOOD_REQUESTS,
             process_id());
    long helper = spawn("icatest", arguments, setup->my_core, PRIORITY_APPLICATION);
    await_notification();
    uint64_t control = new_control();
    long correct = 0;
    for (long i = 0; i < SERVED_MEANWHILE; i++)
        correct += ipc_call_echo(setup->echo, control, (uint64_t)i) == i + 1;
    ica_free(control);
    expect(setup, "undrained_results_server_serves_others", correct, SERVED_MEANWHILE);
    notify(helper);
    int code = -1;
    wait_process(helper, &code);
    expect(setup, "undrained_results_requester_exits", code, 0);
}

static void allocation_limit(struct setup *setup)
{
    struct ica_stats stats;
    ica_stats(&stats);
    uint64_t ids[ICA_PER_PROCESS + 1];
    long count = 0, error = 0;
    while (count <= ICA_PER_PROCESS && (error = ica_allocate(ICA_KIND_CONTROL, 4096)) >= 0)
        ids[count++] = (uint64_t)error;
    expect(setup, "allocation_limit_count", count, ICA_PER_PROCESS - stats.allocated_by_me);
    expect(setup, "allocation_limit_error", error, -E_BUSY);
    for (long i = 0; i < count; i++)
        ica_free(ids[i]);
    long again = ica_allocate(ICA_KIND_DATA, ICA_DATA_MAX_BYTES);
    expect(setup, "allocation_after_free", again >= 0, 1);
    ica_free((uint64_t)again);
    expect(setup, "allocation_too_big", ica_allocate(ICA_KIND_DATA, ICA_DATA_MAX_BYTES + 1),
           -E_INVALID);
    expect(setup, "allocation_zero_bytes", ica_allocate(ICA_KIND_DATA, 0), -E_INVALID);
    expect(setup, "allocation_bad_kind", ica_allocate(7, 4096), -E_INVALID);
}

static void isolation(struct setup *setup)
{
    char arguments[ARGUMENTS_BYTES];
    snprintf(arguments, sizeof arguments, "touch %ld control", setup->echo);
    expect(setup, "isolation_control_gone_after_handover", run_helper(arguments, setup->my_core),
           FAULT_EXIT_CODE);
    snprintf(arguments, sizeof arguments, "touch %ld data", setup->echo);
    expect(setup, "isolation_data_gone_after_handover", run_helper(arguments, setup->my_core),
           FAULT_EXIT_CODE);
    uint64_t control = new_control();
    long data = ica_allocate(ICA_KIND_DATA, 4096);
    *(volatile uint8_t *)ica_address((uint64_t)data) = 0x5a;
    snprintf(arguments, sizeof arguments, "peek 0x%lx", (uint64_t)ica_address(control));
    expect(setup, "isolation_other_process_control", run_helper(arguments, setup->my_core),
           FAULT_EXIT_CODE);
    snprintf(arguments, sizeof arguments, "peek 0x%lx", (uint64_t)ica_address((uint64_t)data));
    expect(setup, "isolation_other_process_data", run_helper(arguments, setup->my_core),
           FAULT_EXIT_CODE);
    ica_free(control);
    ica_free((uint64_t)data);
}

static void wrong_roles(struct setup *setup)
{
    uint64_t control = new_control();
    expect(setup, "receive_not_a_server", ica_receive(ICA_NO_WAIT), -E_PERMISSION);
    expect(setup, "forward_not_received", ica_forward(setup->echo, control, 0), -E_INVALID);
    expect(setup, "return_not_received", ica_return(control), -E_INVALID);
    expect(setup, "request_to_self", ica_request(process_id(), control, ICA_SYNC), -E_NOT_FOUND);
    ica_free(control);
}

/* Instances of a name (docs/ica.md, "Server names and instances"): the
 * echo server "be" is its only instance, 0; an index past the limit, an
 * instance registered already and a name nobody has are refused. */
static void instance_lookups(struct setup *setup)
{
    static struct server_instance_info found[4];
    expect(setup, "instance_lookup_zero", server_lookup_instance("be", 0), setup->echo);
    expect(setup, "instance_lookup_missing", server_lookup_instance("be", 1), -E_NOT_FOUND);
    expect(setup, "instance_lookup_past_limit", server_lookup_instance("be", 99), -E_NOT_FOUND);
    expect(setup, "instance_counts", server_instance_counts("be", found, 4), 1);
    expect(setup, "instance_counts_pid", found[0].pid, setup->echo);
    expect(setup, "instance_counts_unknown", server_instance_counts("nosuch", found, 4),
           -E_NOT_FOUND);
    expect(setup, "instance_register_past_limit", server_register_instance("be", 64), -E_INVALID);
    expect(setup, "instance_register_taken", server_register_instance("be", 0), -E_BUSY);
}

/* A server returns a request whose requester has ended: the ICA leaves the
 * server (the kernel frees it) and the return says 0, not an error that
 * would claim the server still holds it (found by tests/programs/fuzz). */
static void return_to_ended_requester(struct setup *setup)
{
    expect(setup, "return_ended_registered", server_register("icabad"), 0);
    expect(setup, "instance_register_second_by_one_process", server_register_instance("icabad", 1),
           -E_BUSY);
    char arguments[64];
    snprintf(arguments, sizeof arguments, "flood %ld 1 %ld", process_id(), process_id());
    long helper = spawn("icatest", arguments, setup->my_core, PRIORITY_APPLICATION);
    await_notification(); /* its request is in our ring */
    kill_process(helper);
    wait_process(helper, NULL);
    long request = ica_receive_within(0, COLLECT_PATIENCE_MS);
    expect(setup, "return_ended_received", request > 0, 1);
    expect(setup, "return_ended_requester", ica_return((uint64_t)request), 0);
    expect(setup, "return_ended_ica_gone", ica_free((uint64_t)request) < 0, 1);
}

/* The combined calls refuse what their parts refuse, and receive nothing then. */
static void combined_calls(struct setup *setup)
{
    uint64_t control = new_control();
    expect(setup, "return_receive_not_received", ica_return_receive(control, ICA_NO_WAIT, 0),
           -E_INVALID);
    expect(setup, "forward_receive_not_received",
           ica_forward_receive(setup->echo, control, 0, ICA_NO_WAIT, 0), -E_INVALID);
    expect(setup, "forward_receive_no_such_server",
           ica_forward_receive(250, control, 0, ICA_NO_WAIT, 0), -E_NOT_FOUND);
    expect(setup, "return_receive_stale_id",
           ica_return_receive(0x7777ull << 32 | 3, ICA_NO_WAIT, 0), -E_INVALID);
    request_prepare(control, IPC_ECHO);
    ipc_echo_of(ica_control_of(control))->value = 4;
    long error = ica_request(setup->echo, control, ICA_SYNC);
    expect(setup, "combined_refusals_ica_still_held",
           error != 0 ? error : ica_control_of(control)->result, 5);
    ica_free(control);
}

int bad_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    struct ica_stats start, end;
    ica_stats(&start);
    struct setup setup = {
        .server_core = online_cores() > 1 ? 1 : 0, .my_core = (uint32_t)core_id(), .all_ok = true};
    setup.echo = start_server("ipcserver", "be", setup.server_core, "be");
    if (setup.echo < 0)
        return report_case("echo_server_started", false, setup.echo, 0) ? 0 : 1;
    forged_ids(&setup);
    stale_id(&setup);
    travelling_not_held(&setup);
    held_by_other_process(&setup);
    missing_servers(&setup);
    malformed_control(&setup);
    full_ring_and_pending_at_exit(&setup);
    undrained_results(&setup);
    allocation_limit(&setup);
    isolation(&setup);
    wrong_roles(&setup);
    instance_lookups(&setup);
    return_to_ended_requester(&setup);
    combined_calls(&setup);
    uint64_t control = new_control();
    expect(&setup, "server_alive_after_all", ipc_call_echo(setup.echo, control, 9), 10);
    ica_free(control);
    expect(&setup, "echo_server_stopped", stop_ipcserver(setup.echo), 0);
    bool no_leak = pools_return_to(&start, 2000, &end);
    expect(&setup, "no_leak_control", end.control_free, start.control_free);
    expect(&setup, "no_leak_data", end.data_free, start.data_free);
    return setup.all_ok && no_leak ? 0 : 1;
}
