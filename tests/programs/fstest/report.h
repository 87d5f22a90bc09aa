/* report.h: fstest's result lines: one @json {"kind":"fstest",...} per case,
 * and the pattern its files are written with (the host test recomputes it). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Prints the case's line and counts failures. */
void report(const char *name, bool ok, long result);
int failures(void);
/* Byte `offset` of a test file written with `seed`. */
uint8_t pattern_byte(uint32_t seed, uint64_t offset);
void fill_pattern(uint8_t *buffer, uint32_t seed, uint64_t offset, uint64_t length);
bool matches_pattern(const uint8_t *buffer, uint32_t seed, uint64_t offset, uint64_t length);
