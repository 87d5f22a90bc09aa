/* memstream: STREAM's kernels (lib/stream_kernel.c) as a memory node's own
 * work, over arrays in the node's DRAM or its local NVDIMM, for a number of
 * intervals: each one's throughput from the node's TSC (bytes per cycle, MB/s
 * at the TSC's rate) and the cycles the memory-node role ran meanwhile, one
 * @json line each, then the run's line (per kernel, verified).
 *   memstream dram|nvm [-s SIZE] [-i INTERVAL_MS] [-n INTERVALS] */
#include "local_memory.h"
#include <formica/size.h>
#include <formica/stream_kernel.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BYTES (12u << 20)
#define DEFAULT_INTERVAL_MS 2000
#define DEFAULT_INTERVALS 10
#define REFILL_ROUNDS 32 /* the values grow 15-fold a round: checked and filled again */
#define ROLE_NAME "memnode"

struct options {
    enum local_kind kind;
    uint64_t bytes;
    uint64_t interval_ms;
    uint64_t intervals;
};

/* Cycles this process and the memory-node role have run (the fair scheduler's counts). */
struct cycles_seen {
    uint64_t own, serving;
};

static struct process_info processes[PROCESS_LIST_MAX];

static struct cycles_seen cycles_now(void)
{
    struct cycles_seen seen = {0, 0};
    long count = process_list(processes, PROCESS_LIST_MAX);
    for (long i = 0; i < count; i++) {
        if (processes[i].pid == (uint32_t)process_id())
            seen.own = processes[i].cpu_cycles;
        else if (strcmp(processes[i].name, ROLE_NAME) == 0)
            seen.serving += processes[i].cpu_cycles;
    }
    return seen;
}

static void print_rates(const char *prefix, uint64_t bytes, uint64_t cycles, uint64_t tsc_hz)
{
    uint64_t per_cycle = stream_bytes_per_cycle_micro(bytes, cycles);
    uint64_t mb = stream_mb_per_s_milli(bytes, cycles, tsc_hz);
    printf(",\"%sbytes_per_cycle\":%lu.%06lu,\"%smb_per_s\":%lu.%03lu", prefix, per_cycle / 1000000,
           per_cycle % 1000000, prefix, mb / 1000, mb % 1000);
}

struct interval {
    uint64_t number, start, bytes;
    struct cycles_seen seen;
};

static void report_interval(const struct options *options, struct interval *interval, uint64_t now,
                            uint64_t tsc_hz)
{
    struct cycles_seen seen = cycles_now();
    uint64_t cycles = now - interval->start;
    printf("@json {\"kind\":\"memstream\",\"memory\":\"%s\",\"interval\":%lu,\"bytes\":%lu,"
           "\"cycles\":%lu",
           local_kind_name(options->kind), interval->number, interval->bytes, cycles);
    print_rates("", interval->bytes, cycles, tsc_hz);
    printf(",\"own_cycles\":%lu,\"serving_cycles\":%lu}\n", seen.own - interval->seen.own,
           seen.serving - interval->seen.serving);
    interval->number++;
    interval->bytes = 0;
    interval->start = read_timestamp_counter();
    interval->seen = cycles_now();
}

struct totals {
    uint64_t bytes[STREAM_STEPS], cycles[STREAM_STEPS], rounds;
    bool verified;
};

static void report_run(const struct options *options, const struct totals *totals, uint64_t tsc_hz)
{
    uint64_t bytes = 0, cycles = 0;
    for (int step = 0; step < STREAM_STEPS; step++)
        bytes += totals->bytes[step], cycles += totals->cycles[step];
    printf("@json {\"kind\":\"memstream_result\",\"memory\":\"%s\",\"array_bytes\":%lu,"
           "\"intervals\":%lu,\"rounds\":%lu,\"verified\":%s,\"tsc_hz\":%lu",
           local_kind_name(options->kind), options->bytes / 3, options->intervals, totals->rounds,
           totals->verified ? "true" : "false", tsc_hz);
    print_rates("", bytes, cycles, tsc_hz);
    for (int step = 0; step < STREAM_STEPS; step++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "%s_", stream_step_name((enum stream_step)step));
        print_rates(prefix, totals->bytes[step], totals->cycles[step], tsc_hz);
    }
    printf("}\n");
}

static void run(const struct options *options, double *a, double *b, double *c, uint64_t tsc_hz)
{
    uint64_t count = options->bytes / 3 / sizeof(double);
    uint64_t interval_cycles = options->interval_ms * (tsc_hz / 1000);
    struct totals totals = {.verified = true};
    struct stream_values values = stream_values_start();
    stream_fill(a, b, c, count);
    struct interval interval = {
        .number = 1, .start = read_timestamp_counter(), .seen = cycles_now()};
    while (interval.number <= options->intervals) {
        for (int step = 0; step < STREAM_STEPS && interval.number <= options->intervals; step++) {
            uint64_t before = read_timestamp_counter();
            stream_run_step((enum stream_step)step, a, b, c, count);
            uint64_t after = read_timestamp_counter();
            values = stream_values_after_step(values, (enum stream_step)step);
            totals.bytes[step] += stream_step_bytes((enum stream_step)step, count);
            totals.cycles[step] += after - before;
            interval.bytes += stream_step_bytes((enum stream_step)step, count);
            if (after - interval.start >= interval_cycles)
                report_interval(options, &interval, after, tsc_hz);
        }
        if (++totals.rounds % REFILL_ROUNDS == 0) {
            totals.verified = totals.verified && stream_check(a, b, c, count, values);
            stream_fill(a, b, c, count);
            values = stream_values_start();
        }
    }
    totals.verified = totals.verified && stream_check(a, b, c, count, values);
    report_run(options, &totals, tsc_hz);
}

static bool parse(int argc, char **argv, struct options *options)
{
    *options = (struct options){LOCAL_DRAM, DEFAULT_BYTES, DEFAULT_INTERVAL_MS, DEFAULT_INTERVALS};
    if (argc < 2 || !local_kind_parse(argv[1], &options->kind))
        return false;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-s") == 0 && size_parse(argv[i + 1], &options->bytes))
            continue;
        if (strcmp(argv[i], "-i") == 0)
            options->interval_ms = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-n") == 0)
            options->intervals = strtoul(argv[i + 1], NULL, 10);
        else
            return false;
    }
    return argc % 2 == 0 && options->bytes >= 3 * sizeof(double) && options->interval_ms > 0 &&
           options->intervals > 0;
}

int main(int argc, char **argv)
{
    struct options options;
    if (!parse(argc, argv, &options)) {
        printf("usage: memstream dram|nvm [-s SIZE] [-i INTERVAL_MS] [-n INTERVALS]\n");
        return 2;
    }
    struct clock_info clock;
    if (clock_get(&clock) != 0 || clock.tsc_hz < 1000000) {
        printf("memstream: no TSC rate\n");
        return 1;
    }
    uint64_t array = options.bytes / 3 / sizeof(double) * sizeof(double);
    uint8_t *memory = local_memory_take(options.kind, 3 * array);
    if (memory == NULL)
        return 1;
    run(&options, (double *)memory, (double *)(memory + array), (double *)(memory + 2 * array),
        clock.tsc_hz);
    return 0;
}
