/* size.h: size_parse, the one parser of sizes with a K/M/G suffix on command lines
 * (lib/size_parse.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* A whole number with an optional K, M or G suffix (powers of 1024): "4096",
 * "64K", "0x1000" -> *value; false (and *value untouched) for anything else. */
bool size_parse(const char *text, uint64_t *value);
