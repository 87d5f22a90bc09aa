/* nvm_order_record.h: the flush layer's order recorder, for tests in a
 * guest. With the kernel option nvm_record=N (1..65536), a program that
 * opened a recording over its persistent region keeps its first N writes,
 * flushes and fences in that region (offsets into it; a write of at most 8
 * bytes also keeps the value written) and prints them as
 *   @json {"kind":"nvm_order","who":W,"first":I,"records":[["w",OFFSET,BYTES,VALUE],
 *          ["f",OFFSET,BYTES],["s"],...],"recorded":R,"dropped":D,"last":true|false}
 * lines of at most 24 records ("s": a fence), which a checker replays. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define NVM_RECORD_OPTION "nvm_record"
#define NVM_RECORD_MAX 65536u

/* Starts recording [base, base + bytes) when nvm_record=N is on the kernel
 * command line (an earlier recording is dropped); whether it records. */
bool nvm_record_open(const void *base, uint64_t bytes);
/* Whether a recording is open. */
bool nvm_recording(void);
/* Prints what was recorded since the open or the last dump, then starts
 * again from empty. Nothing when not recording. */
void nvm_record_dump(const char *who);
