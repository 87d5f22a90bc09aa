/* console.h: kernel output on the serial port COM1 and, when the firmware
 * left one, the VGA text screen. Both kernels share the state (it lives in
 * kernel_shared), so lines printed by different cores never interleave. */
#pragma once
#include <stdint.h>
#include "spinlock.h"

#define COM1 0x3f8
#define VGA_COLUMNS 80
#define VGA_ROWS 25
#define VGA_ATTRIBUTE 0x0700

struct console_state {
    struct spinlock lock;
    uint16_t *vga; /* NULL when there is no VGA text screen */
    uint32_t vga_row, vga_column;
};

/* Writes `length` bytes as they are (process output), whole under the lock. */
void console_write_text(const char *text, uint64_t length);
/* A byte typed on the serial console, or -1 when none is waiting. */
int console_read_byte(void);
void kprintf(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Prints without taking the lock: for panics, where another core may hold it. */
void kprintf_unlocked(const char *format, ...) __attribute__((format(printf, 1, 2)));
