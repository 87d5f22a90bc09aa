/* console_input.h: what the keyboards typed, waiting for SYS_CONSOLE_READ.
 * The PS/2 keyboard's interrupt (mkernel/ps2_keyboard.c) and the USB
 * keyboard driver (SYS_CONSOLE_INPUT) put bytes in; a console read takes
 * them after the serial port's. One record for both kernels: the m-kernel
 * defines it (symbol console_input_record), kernel_shared points to it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "spinlock.h"
#include <formica/syscalls.h> /* CONSOLE_KEYBOARD_* */

#define CONSOLE_INPUT_BYTES 1024
#define CONSOLE_INPUT_MAGIC 0x504e4943 /* "CINP" */

/* The first three words are read from outside the guest: build/run's --keys
 * types once a keyboard is ready and a reader waits (docs/console.md). */
struct console_input {
    uint32_t magic;                   /* CONSOLE_INPUT_MAGIC once set up */
    _Atomic uint32_t keyboards_ready; /* CONSOLE_KEYBOARD_* that said they are ready */
    _Atomic uint32_t reader_waiting;  /* 1 while a console read waits for input */
    uint32_t head, tail;              /* bytes[tail % size] is the oldest; under the lock */
    struct spinlock lock;
    uint64_t dropped; /* bytes that found the buffer full */
    uint8_t bytes[CONSOLE_INPUT_BYTES];
};
_Static_assert(__builtin_offsetof(struct console_input, keyboards_ready) == 4 &&
                   __builtin_offsetof(struct console_input, reader_waiting) == 8,
               "build/runner/console.py reads these words at these offsets");

/* Appends `length` bytes; returns how many fit (the rest are dropped and counted). */
uint64_t console_input_put(const uint8_t *bytes, uint64_t length);
/* Takes up to `length` bytes; returns how many. */
uint64_t console_input_take(uint8_t *bytes, uint64_t length);
/* A keyboard (CONSOLE_KEYBOARD_*) is ready to type on. */
void console_input_keyboard_ready(uint32_t keyboard);
/* Marks whether a console read is waiting for input. */
void console_input_reader_waits(bool waiting);
