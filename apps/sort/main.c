/* sort: seed 004 §5.3's GNU sort experiment in pager-backed memory: an array
 * of line records pointing into a separate text area (GNU sort's buffer
 * layout), merge-sorted, then checked for order and an order-free checksum.
 * With -S BUFFER: GNU sort's external merge (external.c). */
#include "sort.h"
#include <formica/json.h>
#include <formica/progress.h>
#include <formica/teramem.h>
#include <formica/user.h>
#include <stdio.h>
#include <formica/size.h>
#include <stdlib.h>
#include <string.h>

struct sort_options {
    uint64_t records, seed;
    uint64_t buffer_bytes; /* -S: the external merge's buffer (0: one in-memory sort) */
    bool local_only;       /* --backend none: plain malloc, no limit */
    struct teramem_options teramem;
};

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t line_hash(const char *text, uint64_t length)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < length; i++)
        hash = (hash ^ (uint8_t)text[i]) * 0x100000001b3ull;
    return hash;
}

int compare_lines(const struct line *a, const struct line *b)
{
    uint64_t shorter = a->length < b->length ? a->length : b->length;
    int order = memcmp(a->text, b->text, shorter);
    if (order != 0)
        return order;
    return a->length < b->length ? -1 : a->length > b->length;
}

/* One record: 16 hex digits of a random key, a blank, filler, a newline. */
uint64_t write_record(char *text, uint64_t *random)
{
    static const char digits[] = "0123456789abcdef";
    uint64_t key = splitmix64(random), filler = 16 + splitmix64(random) % 64;
    for (int i = 0; i < KEY_CHARS; i++)
        text[i] = digits[(key >> (60 - 4 * i)) & 15];
    text[KEY_CHARS] = ' ';
    for (uint64_t i = 0; i < filler; i++)
        text[KEY_CHARS + 1 + i] = (char)('a' + (key >> (i % 58)) % 26);
    text[KEY_CHARS + 1 + filler] = '\n';
    return KEY_CHARS + 2 + filler;
}

struct progress progress; /* a line every 2 s: records so far and the swap counters */

static uint64_t build_records(struct line *lines, char *text_area, uint64_t count, uint64_t seed)
{
    uint64_t random = seed, checksum = 0, cursor = 0;
    for (uint64_t i = 0; i < count; i++) {
        progress_tick(&progress, "records built", i, count);
        uint64_t length = write_record(text_area + cursor, &random);
        lines[i] = (struct line){text_area + cursor, length};
        checksum += line_hash(text_area + cursor, length);
        cursor += length;
    }
    return checksum;
}

/* `before`: records merged in earlier passes, for the progress lines. */
static void merge(const struct line *from, struct line *to, uint64_t left, uint64_t middle,
                  uint64_t right, uint64_t before, uint64_t total)
{
    uint64_t i = left, j = middle, k = left;
    while (i < middle && j < right) {
        progress_tick(&progress, "records merged", before + k, total);
        to[k++] = compare_lines(&from[j], &from[i]) < 0 ? from[j++] : from[i++];
    }
    while (i < middle)
        to[k++] = from[i++];
    while (j < right)
        to[k++] = from[j++];
}

static uint64_t merge_passes(uint64_t count)
{
    uint64_t passes = 0;
    for (uint64_t width = 1; width < count; width *= 2)
        passes++;
    return passes;
}

/* Bottom-up merge sort; returns the array that holds the result. Progress
 * counts records merged over all passes. */
static struct line *merge_sort(struct line *lines, struct line *scratch, uint64_t count)
{
    struct line *from = lines, *to = scratch;
    uint64_t pass = 0, total = merge_passes(count) * count;
    for (uint64_t width = 1; width < count; width *= 2, pass++) {
        for (uint64_t left = 0; left < count; left += 2 * width) {
            uint64_t middle = left + width < count ? left + width : count;
            uint64_t right = left + 2 * width < count ? left + 2 * width : count;
            merge(from, to, left, middle, right, pass * count, total);
        }
        struct line *swap = from;
        from = to;
        to = swap;
    }
    return from;
}

static bool verify(const struct line *sorted, uint64_t count, uint64_t checksum)
{
    uint64_t again = 0;
    bool ordered = true;
    for (uint64_t i = 0; i < count; i++) {
        progress_tick(&progress, "records verified", i, count);
        again += line_hash(sorted[i].text, sorted[i].length);
        if (i > 0 && compare_lines(&sorted[i - 1], &sorted[i]) > 0)
            ordered = false;
    }
    if (!ordered)
        printf("sort: output out of order\n");
    if (again != checksum)
        printf("sort: checksum %lx after, %lx before\n", again, checksum);
    return ordered && again == checksum;
}

static int usage(void)
{
    printf("usage: sort -n RECORDS -l LOCAL_LIMIT -b BLOCK -P lru|fifo "
           "--backend node|nvm|disk|block|vems|none [--replicas N] [--seed S] [--capacity BYTES] "
           "[-S BUFFER]\n");
    return 2;
}

static int parse_options(int argc, char **argv, struct sort_options *o)
{
    *o = (struct sort_options){.records = 100000, .seed = 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *value = argv[i + 1];
        if (strcmp(flag, "--backend") == 0 && strcmp(value, "none") == 0) {
            o->local_only = true; /* the baseline: everything in local memory */
            continue;
        }
        int teramem = teramem_parse_option(&o->teramem, flag, value);
        if (teramem < 0)
            return usage();
        if (teramem > 0)
            continue;
        if (!(strcmp(flag, "-n") == 0 && size_parse(value, &o->records)) &&
            !(strcmp(flag, "--seed") == 0 && size_parse(value, &o->seed)) &&
            !(strcmp(flag, "-S") == 0 && size_parse(value, &o->buffer_bytes)))
            return usage();
    }
    return o->records == 0 ? usage() : 0;
}

static void *allocate(const struct sort_options *o, uint64_t bytes)
{
    return o->local_only ? malloc(bytes) : teramalloc(bytes);
}

static uint64_t elapsed_us(uint64_t start)
{
    struct clock_info clock;
    if (clock_get(&clock) != 0 || clock.tsc_hz == 0)
        return 0;
    return (read_timestamp_counter() - start) / (clock.tsc_hz / 1000000);
}

static void report(const struct sort_options *o, bool verified, uint64_t microseconds,
                   const struct teramem_stats *s, uint64_t runs)
{
    printf("@json {\"kind\":\"sort\",\"records\":%lu,\"backend\":", o->records);
    json_print_string(o->local_only ? "none" : teramem_backend_name(o->teramem.backend));
    printf(",\"policy\":\"%s\",\"block_bytes\":%u,\"local_limit_bytes\":%lu,"
           "\"swap_in_blocks\":%lu,\"swap_out_blocks\":%lu,\"clean_drops\":%lu,"
           "\"verified\":%s,\"elapsed_us\":%lu,\"replicas\":%u,\"buffer_bytes\":%lu,"
           "\"runs\":%lu}\n",
           teramem_policy_name(o->teramem.policy), o->teramem.block_bytes,
           o->teramem.local_limit_bytes, s->swap_in_blocks, s->swap_out_blocks, s->clean_drops,
           verified ? "true" : "false", microseconds, o->teramem.replicas ? o->teramem.replicas : 1,
           o->buffer_bytes, runs);
}

/* The whole input in one buffer: the line array merge-sorted in passes. */
static int sort_in_memory(const struct sort_options *o, bool *verified)
{
    uint64_t array_bytes = o->records * sizeof(struct line), text_bytes = o->records * MAX_LINE;
    struct line *lines = allocate(o, array_bytes), *scratch = allocate(o, array_bytes);
    char *text_area = allocate(o, text_bytes);
    if (lines == NULL || scratch == NULL || text_area == NULL) {
        printf("sort: cannot allocate %lu records\n", o->records);
        return 1;
    }
    uint64_t checksum = build_records(lines, text_area, o->records, o->seed);
    struct line *sorted = merge_sort(lines, scratch, o->records);
    *verified = verify(sorted, o->records, checksum);
    return 0;
}

/* GNU sort's external merge with a buffer of -S bytes (external.c). */
static int sort_external(const struct sort_options *o, bool *verified, uint64_t *runs)
{
    uint64_t area_bytes = o->records * MAX_LINE;
    struct external_sort sort = {.input = allocate(o, area_bytes),
                                 .areas = {allocate(o, area_bytes), allocate(o, area_bytes)},
                                 .buffer = allocate(o, o->buffer_bytes),
                                 .area_bytes = area_bytes,
                                 .buffer_bytes = o->buffer_bytes,
                                 .records = o->records};
    if (sort.input == NULL || sort.areas[0] == NULL || sort.areas[1] == NULL ||
        sort.buffer == NULL) {
        printf("sort: cannot allocate %lu records and a %lu-byte buffer\n", o->records,
               o->buffer_bytes);
        return 1;
    }
    *verified = external_sort(&sort, o->seed);
    *runs = sort.runs;
    return 0;
}

static uint64_t region_bytes(const struct sort_options *o)
{
    if (o->buffer_bytes != 0)
        return external_sort_bytes(o->records, o->buffer_bytes) + (1 << 20);
    return 2 * o->records * sizeof(struct line) + o->records * MAX_LINE + (1 << 20);
}

int main(int argc, char **argv)
{
    struct sort_options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    if (o.teramem.capacity_bytes == 0)
        o.teramem.capacity_bytes = region_bytes(&o);
    long error = o.local_only ? 0 : teramem_init(&o.teramem);
    if (error < 0)
        return 1;
    o.teramem.block_bytes = o.teramem.block_bytes ? o.teramem.block_bytes : TERAMEM_DEFAULT_BLOCK;
    o.teramem.policy = o.teramem.policy ? o.teramem.policy : PAGER_POLICY_LRU;
    o.teramem.local_limit_bytes =
        o.teramem.local_limit_bytes ? o.teramem.local_limit_bytes : TERAMEM_DEFAULT_LIMIT;
    uint64_t start = read_timestamp_counter(), runs = 0;
    progress_start(&progress, "sort", 0);
    bool verified = false;
    int failed =
        o.buffer_bytes != 0 ? sort_external(&o, &verified, &runs) : sort_in_memory(&o, &verified);
    if (failed)
        return failed;
    uint64_t microseconds = elapsed_us(start);
    struct teramem_stats stats = {0};
    if (!o.local_only) {
        teramem_stats(&stats);
        teramem_cleanup();
    }
    report(&o, verified, microseconds, &stats, runs);
    return verified ? 0 : 1;
}
