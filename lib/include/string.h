/* string.h: the memory and string functions of Formica's C library subset,
 * shared by both kernels and by user programs (freestanding builds). */
#pragma once
#include <stddef.h>

void *memcpy(void *destination, const void *source, size_t count);
void *memmove(void *destination, const void *source, size_t count);
void *memset(void *destination, int value, size_t count);
int memcmp(const void *left, const void *right, size_t count);
size_t strlen(const char *text);
size_t strnlen(const char *text, size_t limit);
int strcmp(const char *left, const char *right);
int strncmp(const char *left, const char *right, size_t count);
char *strchr(const char *text, int character);
char *strncpy(char *destination, const char *source, size_t count);
