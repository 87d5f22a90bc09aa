/* progress.h: progress lines for long runs (sort, memseq): at most one
 * every interval, with the pager's swap-ins and swap-outs so far when the
 * program has a teramem region. docs/pager.md, "Seeing long runs". */
#pragma once
#include <stdint.h>

#define PROGRESS_DEFAULT_INTERVAL_US 2000000ull

struct progress {
    const char *program;
    uint64_t interval_ticks; /* TSC ticks between lines */
    uint64_t start, last;    /* TSC */
    uint64_t ticks_per_us;
};

/* Starts the clock; interval 0 takes the default (2 s). */
void progress_start(struct progress *progress, const char *program, uint64_t interval_us);
/* Prints `@json {"kind":"progress",...}` and a human line when the
 * interval has passed since the last one: phase, done of total, and the
 * pager's counters. Cheap otherwise (one TSC read). */
void progress_tick(struct progress *progress, const char *phase, uint64_t done, uint64_t total);
