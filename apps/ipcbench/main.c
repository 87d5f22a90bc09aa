/* ipcbench [--requests N] [--only null|two_stage|data|placements]: cost of ICA requests in TSC
 * cycles and IPIs per request: null requests, two-stage chains (direct return or through S1), data
 * handover vs copying, and the paper's placements #1-#5 (docs/ica.md). */
#include "ipcbench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_REQUESTS 2000
#define LAST_PAGE_MARK 0xee /* ipcserver stops touching at a page starting with it */

static long requests = DEFAULT_REQUESTS;
static uint32_t cores = 1;
static int server_serial;
static bool all_ok = true;

static long echo_request(struct bench_case *bench)
{
    return ipc_call_echo(bench->server, bench->control, 41);
}

static long touch_request(struct bench_case *bench)
{
    request_prepare(bench->control, IPC_TOUCH);
    request_attach(bench->control, bench->data);
    long error = ica_request(bench->server, bench->control, ICA_SYNC);
    return error != 0 ? error : ica_control_of(bench->control)->result;
}

static long copy_then_touch_request(struct bench_case *bench)
{
    memcpy(ica_address(bench->data), bench->source, bench->bytes);
    return touch_request(bench);
}

/* The copying baseline: the kernel copies the bytes into the server's granted
 * window (SYS_COPY_TO), then a null-sized request has the server touch them. */
static long kernel_copy_request(struct bench_case *bench)
{
    long error =
        syscall6(SYS_COPY_TO, bench->server, 0, (long)bench->source, (long)bench->bytes, 0, 0);
    if (error != 0)
        return error;
    request_prepare(bench->control, IPC_TOUCH_COPY);
    ipc_touch_copy_of(ica_control_of(bench->control))->bytes = bench->bytes;
    error = ica_request(bench->server, bench->control, ICA_SYNC);
    return error != 0 ? error : ica_control_of(bench->control)->result;
}

/* The first request of the copying case: the server grants its window. */
static long grant_then_copy_request(struct bench_case *bench)
{
    if (request_operation(bench->server, bench->control, IPC_GRANT) != 0)
        return -E_INVALID;
    bench->one_request = kernel_copy_request;
    return kernel_copy_request(bench);
}

/* A fresh server name "bN" for `ipcserver NAME [rest]`; returns the pid. */
static long start_named(char *name, const char *rest, uint32_t core)
{
    char arguments[64];
    snprintf(name, 8, "b%d", server_serial++);
    snprintf(arguments, sizeof arguments, "%s%s%s", name, rest[0] ? " " : "", rest);
    return start_ipcserver(name, arguments, core % cores);
}

/* A case whose servers did not start fails the run with the reason; without the
 * server-priority right no case can start one, so ipcbench stops at once. */
static void report_servers_not_started(const struct bench_case *bench, long error)
{
    all_ok = false;
    if (error == -E_PERMISSION) {
        printf("ipcbench: needs the server-priority right: run --server ipcbench\n");
        exit(2);
    }
    printf("ipcbench: %s %s: servers did not start: %s\n", bench->name, bench->placement,
           error_text(error));
}

/* Runs `bench` against a chain of one or two servers placed on the given cores. */
static void run_chain(struct bench_case *bench, uint32_t first_core, int stages, uint32_t last_core,
                      const char *forward)
{
    char last[8] = "", first[8], rest[32];
    long tail = stages == 2 ? start_named(last, "", last_core) : 0;
    snprintf(rest, sizeof rest, "%s %s", last, forward);
    long head = start_named(first, stages == 2 ? rest : "", first_core);
    bench->server = head;
    if (head < 0 || tail < 0)
        report_servers_not_started(bench, head < 0 ? head : tail);
    else
        all_ok &= measure(bench, requests);
    if (head > 0)
        stop_ipcserver(head);
    if (tail > 0)
        stop_ipcserver(tail);
}

static void null_requests(uint64_t control)
{
    struct bench_case same = {"null_sync", "same-core", 0, 0, control, 0, NULL, 42, echo_request};
    run_chain(&same, 0, 1, 0, "");
    struct bench_case cross = {"null_sync", "cross-core", 0, 0, control, 0, NULL, 42, echo_request};
    run_chain(&cross, 1, 1, 1, "");
}

static void two_stage_requests(uint64_t control)
{
    static const char *forwards[] = {"direct", "via"};
    static const char *names[] = {"two_stage_direct", "two_stage_via_s1"};
    for (int i = 0; i < 2; i++) {
        struct bench_case same = {names[i], "same-core", 0, 0, control, 0, NULL, 42, echo_request};
        run_chain(&same, 0, 2, 0, forwards[i]);
        struct bench_case cross = {names[i], "cross-core", 0,  0,           control,
                                   0,        NULL,         42, echo_request};
        run_chain(&cross, 1, 2, 2, forwards[i]);
    }
}

/* Every page starts with 1, the last with LAST_PAGE_MARK; the sum ipcserver returns. */
static long mark_pages(uint8_t *bytes, uint64_t size)
{
    uint64_t pages = size / 4096;
    for (uint64_t page = 0; page < pages; page++)
        bytes[page * 4096] = page + 1 == pages ? LAST_PAGE_MARK : 1;
    return (long)(pages - 1) + LAST_PAGE_MARK;
}

static void data_requests(uint64_t control)
{
    static const uint64_t sizes[] = {4096, 65536, ICA_DATA_MAX_BYTES};
    uint8_t *source = malloc(ICA_DATA_MAX_BYTES);
    for (int i = 0; i < 3; i++) {
        long data = ica_allocate(ICA_KIND_DATA, sizes[i]);
        if (data < 0 || source == NULL) {
            printf("ipcbench: data %lu bytes: no data ICA or buffer: %s\n", sizes[i],
                   error_text(data < 0 ? data : -E_NO_MEMORY));
            all_ok = false;
            continue;
        }
        long expected = mark_pages(ica_address((uint64_t)data), sizes[i]);
        mark_pages(source, sizes[i]);
        struct bench_case handover = {"handover_only", "cross-core",   sizes[i], 0,
                                      control,         (uint64_t)data, NULL,     expected,
                                      touch_request};
        run_chain(&handover, 1, 1, 1, "");
        struct bench_case copy = {
            "copy_into_ica", "cross-core",           sizes[i], 0, control, (uint64_t)data, source,
            expected,        copy_then_touch_request};
        run_chain(&copy, 1, 1, 1, "");
        struct bench_case kernel_copy = {
            "kernel_copy", "cross-core",           sizes[i], 0, control, 0, source,
            expected,      grant_then_copy_request};
        run_chain(&kernel_copy, 1, 1, 1, "");
        ica_free((uint64_t)data);
    }
    free(source);
}

/* The paper's forms with the AP on core 0: FS and BLK cores (DESIGN.md). */
static void placement_forms(uint64_t control)
{
    static const char *names[] = {"#1", "#2", "#3", "#4", "#5"};
    static const uint32_t fs_core[] = {0, 1, 0, 1, 1}, blk_core[] = {0, 0, 1, 1, 2};
    for (int form = 0; form < 5; form++) {
        if (fs_core[form] >= cores || blk_core[form] >= cores)
            continue;
        struct bench_case bench = {"fs_blk_direct", names[form], 0, 0, control, 0, NULL, 42,
                                   echo_request};
        run_chain(&bench, fs_core[form], 2, blk_core[form], "direct");
    }
}

static uint32_t online_cores(void)
{
    struct core_info list[64];
    long count = core_list(list, 64);
    return count > 0 ? (uint32_t)count : 1;
}

/* True unless --only names another group of cases. */
static bool chosen(const char *only, const char *group)
{
    return only == NULL || strcmp(only, group) == 0;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--requests") == 0)
            requests = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
    }
    if (requests < 100) {
        printf(
            "usage: ipcbench [--requests N] [--only null|two_stage|data|placements] (N >= 100)\n");
        return 2;
    }
    cores = online_cores();
    struct clock_info clock;
    clock_get(&clock);
    printf("@json {\"kind\":\"ipcbench_setup\",\"cores\":%u,\"tsc_hz\":%lu,\"requests\":%ld,"
           "\"core\":%ld}\n",
           cores, clock.tsc_hz, requests, core_id());
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0) {
        printf("ipcbench: no control ICA: %s\n", error_text(control));
        return 1;
    }
    if (chosen(only, "null"))
        null_requests((uint64_t)control);
    if (chosen(only, "two_stage"))
        two_stage_requests((uint64_t)control);
    if (chosen(only, "data"))
        data_requests((uint64_t)control);
    if (chosen(only, "placements"))
        placement_forms((uint64_t)control);
    ica_free((uint64_t)control);
    return all_ok ? 0 : 1;
}
