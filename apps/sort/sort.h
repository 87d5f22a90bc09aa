/* sort.h: what sort's two shapes share (main.c): the records, their order and
 * hash, the report's progress. external.c is the shape of GNU sort with a
 * buffer smaller than its input (-S): runs sorted in memory, then merged. */
#pragma once
#include <formica/progress.h>
#include <stdbool.h>
#include <stdint.h>

#define KEY_CHARS 16
#define MAX_LINE 96     /* a record's bytes, bounding the average (66) */
#define LONGEST_LINE 97 /* 16 + 1 + 79 + 1 bytes (write_record) */
#define MERGE_FAN_IN 16 /* runs merged at once, GNU sort's NMERGE */

struct line {
    const char *text;
    uint64_t length;
};

extern struct progress progress;

uint64_t line_hash(const char *text, uint64_t length);
int compare_lines(const struct line *a, const struct line *b);
/* One record at `text`; its length. */
uint64_t write_record(char *text, uint64_t *random);

/* The external sort's allocations: the input, two areas for the runs and
 * the buffer, each from `allocate` (teramalloc or malloc). */
struct external_sort {
    char *input, *areas[2], *buffer;
    uint64_t input_bytes, area_bytes, buffer_bytes;
    uint64_t records, checksum;
    uint64_t runs; /* written by the first phase */
};

/* Bytes the external sort of `records` records with a `buffer_bytes` buffer
 * allocates. */
uint64_t external_sort_bytes(uint64_t records, uint64_t buffer_bytes);
/* Writes `records` records (seed `seed`) to the input, sorts them into runs
 * of the buffer's size and merges the runs; true when the output is in
 * order and holds the same records. */
bool external_sort(struct external_sort *sort, uint64_t seed);
