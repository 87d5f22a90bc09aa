/* measure.c: ipcbench's timing loop: TSC cycles of each request, median and
 * 99th percentile, IPIs per request from ica_stats; and its servers. */
#include "ipcbench.h"
#include <stdio.h>
#include <stdlib.h>

#define WARM_UP_REQUESTS 100

/* Shell sort: the user library has no qsort. */
static void sort_cycles(uint64_t *cycles, long count)
{
    for (long gap = count / 2; gap > 0; gap /= 2)
        for (long i = gap; i < count; i++) {
            uint64_t value = cycles[i];
            long j = i;
            for (; j >= gap && cycles[j - gap] > value; j -= gap)
                cycles[j] = cycles[j - gap];
            cycles[j] = value;
        }
}

/* Runs `count` requests; stores each one's cycles when `cycles` is set. */
static bool run_requests(struct bench_case *bench, long count, uint64_t *cycles)
{
    for (long i = 0; i < count; i++) {
        uint64_t start = read_timestamp_counter();
        long result = bench->one_request(bench);
        uint64_t end = read_timestamp_counter();
        if (result != bench->expected) {
            printf("ipcbench: %s %s: request %ld gave %ld, not %ld\n", bench->name,
                   bench->placement, i, result, bench->expected);
            return false;
        }
        if (cycles != NULL)
            cycles[i] = end - start;
    }
    return true;
}

static void print_case(const struct bench_case *bench, const uint64_t *sorted, long requests,
                       uint64_t ipis)
{
    uint64_t per_mille = ipis * 1000 / (uint64_t)requests;
    printf("@json {\"kind\":\"ipcbench\",\"case\":\"%s\",\"placement\":\"%s\",\"bytes\":%lu,"
           "\"requests\":%ld,\"cycles_median\":%lu,\"cycles_p99\":%lu,"
           "\"ipis_per_request\":%lu.%03lu}\n",
           bench->name, bench->placement, bench->bytes, requests, sorted[requests / 2],
           sorted[requests * 99 / 100], per_mille / 1000, per_mille % 1000);
}

bool measure(struct bench_case *bench, long requests)
{
    uint64_t *cycles = malloc(sizeof(uint64_t) * (size_t)requests);
    struct ica_stats before, after;
    if (cycles == NULL)
        printf("ipcbench: %s %s: no memory for %ld timings\n", bench->name, bench->placement,
               requests);
    bool ok = cycles != NULL && run_requests(bench, WARM_UP_REQUESTS, NULL);
    ica_stats(&before);
    ok = ok && run_requests(bench, requests, cycles);
    ica_stats(&after);
    if (ok) {
        sort_cycles(cycles, requests);
        print_case(bench, cycles, requests, after.ipis - before.ipis);
    }
    free(cycles);
    return ok;
}

long start_ipcserver(const char *name, const char *arguments, uint32_t core)
{
    long pid = spawn("ipcserver", arguments, core, PRIORITY_SERVER);
    if (pid < 0)
        return pid;
    long found = server_wait_for(name, 5000);
    return found == pid ? pid : -E_NOT_FOUND;
}

void stop_ipcserver(long pid)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control >= 0) {
        request_operation(pid, (uint64_t)control, IPC_EXIT);
        ica_free((uint64_t)control);
    }
    wait_process(pid, NULL);
}
