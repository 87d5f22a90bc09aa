/* stdlib.h: memory allocation, number parsing and process exit for user
 * programs. malloc is a first-fit allocator over the process heap that
 * SYS_MEMORY_GROW extends (see lib/malloc.c and docs/userland.md). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1

/* Blocks are 16-byte aligned; malloc(0) returns a unique pointer. NULL when
 * the kernel refuses to grow the heap. */
void *malloc(size_t size);
void free(void *pointer);
void *calloc(size_t count, size_t size);
void *realloc(void *pointer, size_t size);

/* Parse an optional sign, then digits in `base` (2-36; 0 = decimal, or 0x
 * hexadecimal, or leading-0 octal). *end, when given, points past the last
 * digit used. Values that do not fit saturate to the type's limits. */
long strtol(const char *text, char **end, int base);
unsigned long strtoul(const char *text, char **end, int base);
int atoi(const char *text);

/* Flushes console output and ends the process with `code`. */
__attribute__((noreturn)) void exit(int code);
/* Ends the process with exit code 134 after a message. */
__attribute__((noreturn)) void abort(void);
