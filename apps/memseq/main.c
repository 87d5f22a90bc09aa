/* memseq: seed 004 §5.2.1-5.2.3 in pager-backed memory: write a buffer larger
 * than the local limit, then read it sequentially (bandwidth, swap-in latency
 * per block) and with a stride (swap-in time per touched block); @json lines. */
#include "kernel_counts.h"
#include <formica/json.h>
#include <formica/progress.h>
#include <formica/teramem.h>
#include <formica/user.h>
#include <stdio.h>
#include <formica/size.h>
#include <stdlib.h>
#include <string.h>

struct memseq_options {
    uint64_t size, stride;
    uint64_t prefetch; /* sequential read: teramem_prefetch this many bytes ahead (0: none) */
    uint64_t pause_ms; /* between writing and reading: time to fail a node or kill the pager */
    const char *mode;  /* seq, persist-write, persist-check, overalloc, released */
    struct teramem_options teramem;
};

static int parse_options(int argc, char **argv, struct memseq_options *o)
{
    *o = (struct memseq_options){.size = 16 << 20, .mode = "seq"};
    o->teramem = (struct teramem_options){.local_limit_bytes = 4 << 20,
                                          .block_bytes = 64 << 10,
                                          .policy = PAGER_POLICY_FIFO,
                                          .backend = PAGER_BACKEND_DISK};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *value = argv[i + 1];
        int teramem = teramem_parse_option(&o->teramem, flag, value);
        if (teramem > 0)
            continue;
        if (strcmp(flag, "--mode") == 0)
            o->mode = value;
        else if (teramem < 0 ||
                 !((strcmp(flag, "-s") == 0 && size_parse(value, &o->size)) ||
                   (strcmp(flag, "--stride") == 0 && size_parse(value, &o->stride)) ||
                   (strcmp(flag, "--prefetch") == 0 && size_parse(value, &o->prefetch)) ||
                   (strcmp(flag, "--pause") == 0 && size_parse(value, &o->pause_ms)))) {
            printf("usage: memseq -s SIZE -l LIMIT -b BLOCK --backend node|nvm|disk|block|vems "
                   "[--replicas N] "
                   "[--stride BYTES] [--prefetch BYTES] [--pause MS] [--mode "
                   "seq|persist-write|persist-check|overalloc|released] "
                   "[--key K]\n");
            return 2;
        }
    }
    o->teramem.capacity_bytes = o->size;
    return 0;
}

static uint64_t tsc_per_us(void)
{
    struct clock_info clock;
    return clock_get(&clock) == 0 && clock.tsc_hz >= 1000000 ? clock.tsc_hz / 1000000 : 1;
}

static struct progress progress; /* a line every 2 s: bytes so far and the swap counters */

static void fill(uint8_t *buffer, uint64_t size)
{
    for (uint64_t offset = 0; offset < size; offset += 4096) {
        progress_tick(&progress, "bytes written", offset, size);
        buffer[offset] = (uint8_t)(offset >> 12);
    }
}

static void print_common(const char *mode, const struct memseq_options *o)
{
    printf("@json {\"kind\":\"memseq\",\"mode\":\"%s\",\"backend\":\"%s\",\"block_bytes\":%u,"
           "\"local_limit_bytes\":%lu,\"bytes\":%lu",
           mode, teramem_backend_name(o->teramem.backend), o->teramem.block_bytes,
           o->teramem.local_limit_bytes, o->size);
}

/* Touches one byte per page; the first touch of each block is its swap-in. */
static bool sequential(uint8_t *buffer, const struct memseq_options *o)
{
    struct teramem_stats before, after;
    struct kernel_counts counts_before, counts_after;
    kernel_counts_read(&counts_before);
    teramem_stats(&before);
    uint64_t start = read_timestamp_counter(), sum = 0, errors = 0;
    for (uint64_t offset = 0; offset < o->size; offset += 4096) {
        progress_tick(&progress, "bytes read", offset, o->size);
        if (o->prefetch != 0 && offset % o->prefetch == 0) /* the next piece, several at once */
            teramem_prefetch(buffer + offset, o->prefetch);
        sum += buffer[offset];
        errors += buffer[offset] != (uint8_t)(offset >> 12);
    }
    uint64_t us = (read_timestamp_counter() - start) / tsc_per_us();
    teramem_stats(&after);
    kernel_counts_read(&counts_after);
    uint64_t swap_ins = after.swap_in_blocks - before.swap_in_blocks;
    print_common("sequential", o);
    kernel_counts_print(&counts_before, &counts_after);
    printf(",\"elapsed_us\":%lu,\"mb_per_s\":%lu,\"swap_in_blocks\":%lu,"
           "\"swap_in_us\":%lu,\"verified\":%s,\"sum\":%lu,\"prefetch_bytes\":%lu}\n",
           us, us ? o->size / us : 0, swap_ins, swap_ins ? us / swap_ins : 0,
           errors == 0 ? "true" : "false", sum, o->prefetch);
    return errors == 0;
}

static void stride(uint8_t *buffer, const struct memseq_options *o)
{
    struct teramem_stats before, after;
    teramem_stats(&before);
    uint64_t start = read_timestamp_counter(), sum = 0;
    for (uint64_t offset = 0; offset < o->size; offset += o->stride)
        sum += buffer[offset];
    uint64_t us = (read_timestamp_counter() - start) / tsc_per_us();
    teramem_stats(&after);
    print_common("stride", o);
    printf(",\"stride_bytes\":%lu,\"elapsed_us\":%lu,\"swap_in_blocks\":%lu,\"sum\":%lu}\n",
           o->stride, us, after.swap_in_blocks - before.swap_in_blocks, sum);
}

/* A pattern that depends on the key and the page: what persistence keeps. */
static uint8_t persist_byte(uint64_t key, uint64_t offset)
{
    return (uint8_t)(key * 31 + (offset >> 12) * 7 + 1);
}

static int persist(const struct memseq_options *o, bool write)
{
    long attached = teramem_init(&o->teramem);
    uint8_t *buffer = attached < 0 ? NULL : teramalloc(o->size);
    if (buffer == NULL)
        return 1;
    uint64_t errors = 0, key = o->teramem.persistent_key;
    for (uint64_t offset = 0; offset < o->size; offset += 4096) {
        if (write)
            buffer[offset] = persist_byte(key, offset);
        else
            errors += buffer[offset] != persist_byte(key, offset);
    }
    teramem_cleanup();
    printf("@json {\"kind\":\"memseq\",\"mode\":\"%s\",\"key\":%lu,\"bytes\":%lu,"
           "\"reattached\":%s,\"mismatches\":%lu}\n",
           o->mode, key, o->size, attached > 0 ? "true" : "false", errors);
    return errors == 0 && (write || attached > 0) ? 0 : 1;
}

/* teramalloc beyond the region: NULL with a message, nothing else. */
static int overalloc(const struct memseq_options *o)
{
    if (teramem_init(&o->teramem) < 0)
        return 1;
    void *fits = teramalloc(o->size / 2), *too_big = teramalloc(o->size);
    printf("@json {\"kind\":\"memseq\",\"mode\":\"overalloc\",\"fits\":%s,\"too_big_null\":%s}\n",
           fits ? "true" : "false", too_big ? "false" : "true");
    teramem_cleanup();
    return fits != NULL && too_big == NULL ? 0 : 1;
}

/* Touching the region after teramem_cleanup: the kernel ends the process. */
static int released(const struct memseq_options *o)
{
    if (teramem_init(&o->teramem) < 0)
        return 1;
    volatile uint8_t *buffer = teramalloc(4096);
    buffer[0] = 1;
    teramem_cleanup();
    printf("memseq: touching the released region\n");
    fflush_console();
    buffer[0] = 2;
    printf("memseq: the access after release went through\n");
    return 0;
}

/* After the buffer is written and out: a line saying so, then the pause. */
static void pause_after_writing(const struct memseq_options *o)
{
    if (o->pause_ms == 0)
        return;
    struct teramem_stats stats;
    teramem_stats(&stats);
    printf("memseq: %lu bytes written, %lu swap-outs; pausing %lu ms before reading\n", o->size,
           stats.swap_out_blocks, o->pause_ms);
    printf("@json {\"kind\":\"memseq_pause\",\"bytes\":%lu,\"swap_out_blocks\":%lu,"
           "\"pause_ms\":%lu}\n",
           o->size, stats.swap_out_blocks, o->pause_ms);
    fflush_console();
    sleep_ms(o->pause_ms);
}

static int sequential_run(const struct memseq_options *o)
{
    if (teramem_init(&o->teramem) < 0)
        return 1;
    uint8_t *buffer = teramalloc(o->size);
    if (buffer == NULL)
        return 1;
    fill(buffer, o->size);
    teramem_drop(buffer, o->size); /* everything resident goes out first */
    pause_after_writing(o);
    bool ok = sequential(buffer, o);
    if (o->stride != 0) {
        teramem_drop(buffer, o->size);
        stride(buffer, o);
    }
    teramem_cleanup();
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct memseq_options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    progress_start(&progress, "memseq", 0);
    if (strcmp(o.mode, "persist-write") == 0 || strcmp(o.mode, "persist-check") == 0)
        return persist(&o, o.mode[8] == 'w');
    if (strcmp(o.mode, "overalloc") == 0)
        return overalloc(&o);
    if (strcmp(o.mode, "released") == 0)
        return released(&o);
    return sequential_run(&o);
}
