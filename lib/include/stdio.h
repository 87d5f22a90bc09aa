/* stdio.h: console output and input for user programs. Output is line
 * buffered: it goes to the console (one SYS_CONSOLE_WRITE) at each newline,
 * when the buffer fills, on fflush_console(), before a read, and at exit. */
#pragma once
#include <stdarg.h>
#include <stddef.h>

#define EOF (-1)

int printf(const char *format, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *format, va_list arguments);
int snprintf(char *buffer, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
int vsnprintf(char *buffer, size_t size, const char *format, va_list arguments);
/* Writes `text` and a newline. */
int puts(const char *text);
int putchar(int character);
/* Sends whatever output is buffered to the console now. */
void fflush_console(void);

/* Reads one console byte (blocking); returns it or EOF on an error. */
int getchar(void);
/* Reads a line typed on the console into `buffer` (at most size - 1 bytes,
 * NUL-terminated, without the end of line), echoing what is typed and
 * handling backspace/delete. '\r' or '\n' ends the line. Returns the line's
 * length, or EOF if the console cannot be read. */
int read_line(char *buffer, size_t size);
