/* external.c: sort -S BUFFER, GNU sort's shape when its input is larger than
 * its buffer: the input read in order into the buffer (text from its start, the
 * line array beside it), each buffer's lines merge-sorted there and written out
 * as a run, then the runs merged MERGE_FAN_IN at a time, each read in order. */
#include "sort.h"
#include <stdio.h>
#include <string.h>

struct run {
    uint64_t start, bytes; /* in an area */
};

static struct run runs[4096];

static uint64_t generate_input(struct external_sort *sort, uint64_t seed)
{
    uint64_t random = seed, cursor = 0;
    sort->checksum = 0;
    for (uint64_t i = 0; i < sort->records; i++) {
        progress_tick(&progress, "records built", i, sort->records);
        uint64_t length = write_record(sort->input + cursor, &random);
        sort->checksum += line_hash(sort->input + cursor, length);
        cursor += length;
    }
    return cursor;
}

static uint64_t line_length(const char *text, const char *end)
{
    const char *at = text;
    while (at < end && *at != '\n')
        at++;
    return (uint64_t)(at - text) + (at < end);
}

/* Top-down merge sort, depth first as GNU sort's sequential_sort: small
 * subarrays are sorted while they are still in local memory. */
static void sort_lines(struct line *lines, struct line *scratch, uint64_t count)
{
    if (count < 2)
        return;
    uint64_t half = count / 2, i = 0, j = half, k = 0;
    sort_lines(lines, scratch, half);
    sort_lines(lines + half, scratch, count - half);
    while (i < half && j < count)
        scratch[k++] = compare_lines(&lines[j], &lines[i]) < 0 ? lines[j++] : lines[i++];
    while (i < half)
        scratch[k++] = lines[i++];
    memcpy(lines, scratch, k * sizeof *lines); /* lines[j..count) are in place */
}

/* Fills the buffer from the input at `*cursor`: each line's text copied and
 * its struct line kept; the lines taken. Text and the two line arrays
 * (the lines and the sort's scratch) fit in the buffer. */
static uint64_t fill_buffer(struct external_sort *sort, uint64_t *cursor, struct line **lines)
{
    uint64_t used = 0, count = 0, per_line = 2 * sizeof(struct line);
    const char *end = sort->input + sort->input_bytes;
    struct line *top = (struct line *)(sort->buffer + sort->buffer_bytes);
    while (*cursor < sort->input_bytes &&
           used + LONGEST_LINE + (count + 1) * per_line <= sort->buffer_bytes) {
        uint64_t length = line_length(sort->input + *cursor, end);
        memcpy(sort->buffer + used, sort->input + *cursor, length);
        top[-1 - (int64_t)count] = (struct line){sort->buffer + used, length};
        used += length;
        *cursor += length;
        count++;
    }
    *lines = top - count; /* lines[0] is the last line read: the sort orders them */
    return count;
}

static uint64_t write_run(char *area, uint64_t at, const struct line *lines, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        memcpy(area + at, lines[i].text, lines[i].length);
        at += lines[i].length;
    }
    return at;
}

/* The first phase: runs of the buffer's size in areas[0]; false when there
 * would be more runs than the table holds. */
static bool make_runs(struct external_sort *sort)
{
    uint64_t cursor = 0, written = 0;
    sort->runs = 0;
    while (cursor < sort->input_bytes) {
        progress_tick(&progress, "input bytes sorted into runs", cursor, sort->input_bytes);
        if (sort->runs == sizeof runs / sizeof runs[0]) {
            printf("sort: more than %lu runs: a larger -S\n", (unsigned long)sort->runs);
            return false;
        }
        struct line *lines = NULL;
        uint64_t count = fill_buffer(sort, &cursor, &lines);
        if (count == 0) {
            printf("sort: -S %lu holds no line\n", (unsigned long)sort->buffer_bytes);
            return false;
        }
        sort_lines(lines, lines - count, count); /* the scratch below the lines */
        uint64_t end = write_run(sort->areas[0], written, lines, count);
        runs[sort->runs++] = (struct run){written, end - written};
        written = end;
    }
    return true;
}

struct cursor {
    const char *at, *end;
    struct line line; /* the run's current line; length 0 at its end */
};

static void cursor_next(struct cursor *cursor)
{
    uint64_t length = cursor->at < cursor->end ? line_length(cursor->at, cursor->end) : 0;
    cursor->line = (struct line){cursor->at, length};
    cursor->at += length;
}

/* Merges `count` runs of `from` into `to` at `at`; the merged run. */
static struct run merge_runs(const char *from, const struct run *group, uint32_t count, char *to,
                             uint64_t at)
{
    struct cursor cursors[MERGE_FAN_IN];
    for (uint32_t i = 0; i < count; i++) {
        cursors[i].at = from + group[i].start;
        cursors[i].end = cursors[i].at + group[i].bytes;
        cursor_next(&cursors[i]);
    }
    uint64_t start = at;
    for (;;) {
        struct cursor *least = NULL;
        for (uint32_t i = 0; i < count; i++)
            if (cursors[i].line.length != 0 &&
                (least == NULL || compare_lines(&cursors[i].line, &least->line) < 0))
                least = &cursors[i];
        if (least == NULL)
            return (struct run){start, at - start};
        memcpy(to + at, least->line.text, least->line.length);
        at += least->line.length;
        cursor_next(least);
    }
}

/* The second phase: passes of MERGE_FAN_IN-way merges between the areas
 * until one run is left; the area that holds it. */
static const char *merge_all(struct external_sort *sort)
{
    uint32_t from = 0;
    while (sort->runs > 1) {
        uint64_t merged = 0, at = 0;
        for (uint64_t first = 0; first < sort->runs; first += MERGE_FAN_IN) {
            progress_tick(&progress, "runs merged in this pass", first, sort->runs);
            uint64_t left = sort->runs - first;
            uint32_t count = left < MERGE_FAN_IN ? (uint32_t)left : MERGE_FAN_IN;
            struct run group[MERGE_FAN_IN];
            memcpy(group, &runs[first], count * sizeof *group);
            runs[merged] = merge_runs(sort->areas[from], group, count, sort->areas[1 - from], at);
            at += runs[merged++].bytes;
        }
        sort->runs = merged;
        from = 1 - from;
    }
    return sort->areas[from];
}

static bool verify_output(const struct external_sort *sort, const char *output)
{
    const char *at = output, *end = output + sort->input_bytes;
    uint64_t count = 0, again = 0;
    struct line previous = {NULL, 0};
    bool ordered = true;
    while (at < end) {
        progress_tick(&progress, "records verified", count, sort->records);
        struct line line = {at, line_length(at, end)};
        again += line_hash(line.text, line.length);
        if (previous.text != NULL && compare_lines(&previous, &line) > 0)
            ordered = false;
        previous = line;
        at += line.length;
        count++;
    }
    if (!ordered)
        printf("sort: output out of order\n");
    if (count != sort->records || again != sort->checksum)
        printf("sort: %lu records after, %lu before (checksum %lx, %lx)\n", (unsigned long)count,
               (unsigned long)sort->records, again, sort->checksum);
    return ordered && count == sort->records && again == sort->checksum;
}

uint64_t external_sort_bytes(uint64_t records, uint64_t buffer_bytes)
{
    return 3 * records * MAX_LINE + buffer_bytes;
}

bool external_sort(struct external_sort *sort, uint64_t seed)
{
    sort->buffer_bytes &= ~(uint64_t)15; /* the line arrays at its end stay aligned */
    sort->input_bytes = generate_input(sort, seed);
    if (!make_runs(sort))
        return false;
    uint64_t runs_written = sort->runs;
    bool verified = verify_output(sort, merge_all(sort));
    sort->runs = runs_written;
    return verified;
}
