/* format.h: printf-style formatting into any sink, shared by the kernels'
 * consoles and the user C library. Supports %d %i %u %x %X %p %s %c %% with
 * flags '-' '0', a width, a precision for %s, and the l/ll/z length modifiers. */
#pragma once
#include <stdarg.h>
#include <stddef.h>

typedef void (*format_sink)(void *context, char character);

/* Formats into `sink`; returns the number of characters produced. */
int format_to(format_sink sink, void *context, const char *format, va_list arguments);
/* Formats into `buffer` (always NUL-terminated when size > 0); returns the
 * length the full output would have had. */
int format_string(char *buffer, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
int format_string_va(char *buffer, size_t size, const char *format, va_list arguments);
