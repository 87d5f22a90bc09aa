/* stream_kernel.h: McCalpin's STREAM kernels over three arrays of doubles
 * (copy, scale, add, triad), the bytes each one moves and the values every
 * element holds after N rounds: the one kernel flashbench's stream workload
 * and the memory node's memstream run (lib/stream_kernel.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define STREAM_SCALAR 3.0

enum stream_step { STREAM_COPY, STREAM_SCALE, STREAM_ADD, STREAM_TRIAD, STREAM_STEPS };

/* The arrays' values after some rounds (a = 1, b = 2, c = 0 before the first). */
struct stream_values {
    double a, b, c;
};

/* copy: c = a; scale: b = 3c; add: c = a + b; triad: a = b + 3c, over `count` elements. */
void stream_run_step(enum stream_step step, double *a, double *b, double *c, uint64_t count);
/* The four steps in order: one STREAM round. */
void stream_run_round(double *a, double *b, double *c, uint64_t count);
/* Bytes a step moves over `count` elements, as STREAM counts them (2, 2, 3 and 3 arrays). */
uint64_t stream_step_bytes(enum stream_step step, uint64_t count);
uint64_t stream_round_bytes(uint64_t count);
const char *stream_step_name(enum stream_step step);
/* a = 1, b = 2, c = 0 in every element: the values stream_values_start gives. */
void stream_fill(double *a, double *b, double *c, uint64_t count);
/* The values one more step (or round) leaves in every element. */
struct stream_values stream_values_start(void);
struct stream_values stream_values_after_step(struct stream_values values, enum stream_step step);
struct stream_values stream_values_after_round(struct stream_values values);
/* Whether every element of the three arrays holds `values`. */
bool stream_check(const double *a, const double *b, const double *c, uint64_t count,
                  struct stream_values values);
/* The rates a run reports, in fixed point (no floating-point printf): bytes per TSC cycle in
 * millionths, and MB/s (10^6 bytes) in thousandths at `tsc_hz` cycles a second; 0 for 0 cycles. */
uint64_t stream_bytes_per_cycle_micro(uint64_t bytes, uint64_t cycles);
uint64_t stream_mb_per_s_milli(uint64_t bytes, uint64_t cycles, uint64_t tsc_hz);
