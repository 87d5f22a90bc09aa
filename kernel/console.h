/* console.h: kernel output on the serial port COM1 (when the machine has
 * one), the VGA text screen (when the firmware left one) and the loader's
 * framebuffer (framebuffer_console.h); input from the serial port and the
 * keyboards (console_input.h). Both kernels share the state (it lives in
 * kernel_shared), so lines printed by different cores never interleave. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "framebuffer_console.h"
#include "spinlock.h"

#define COM1 0x3f8
#define VGA_COLUMNS 80
#define VGA_ROWS 25
#define VGA_ATTRIBUTE 0x0700
/* Rows the 32 KiB of colour text memory holds: the screen is a window onto
 * them, moved by the CRTC's start address, so a scroll writes one row. */
#define VGA_MEMORY_ROWS (0x8000 / 2 / VGA_COLUMNS)
/* Shows text memory from `row` on (the CRTC's start address, in cells). */
void console_vga_show_from(uint32_t row);

struct console_input;

struct console_state {
    struct spinlock lock;
    bool serial;   /* COM1 answered at boot; without it nothing is sent or read there */
    uint16_t *vga; /* NULL when there is no VGA text screen */
    uint32_t vga_row, vga_column;
    uint32_t vga_top; /* the text memory's row shown at the top of the screen */
    struct framebuffer_console framebuffer;
    struct console_input *input; /* the keyboards' bytes (console_input.h) */
};

/* Writes `length` bytes as they are (process output), whole under the lock. */
void console_write_text(const char *text, uint64_t length);
/* A byte typed on the serial console, or -1 when none is waiting (a keyboard's
 * bytes are in console_input.h). */
int console_read_serial_byte(void);
void kprintf(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Prints without taking the lock: for panics, where another core may hold it. */
void kprintf_unlocked(const char *format, ...) __attribute__((format(printf, 1, 2)));
