/* panic.h: the end of the line for a kernel. panic() prints the core and
 * the cause, then exits QEMU with a failure status (halts on bare metal);
 * machine_exit() ends a run with a given status. */
#pragma once
#include <stdint.h>

void panic(const char *format, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* The first step of a panic (panic() does it; a fault report calls it before
 * printing): interrupts off, other cores silenced, the console taken. A
 * second core that panics meanwhile halts quietly. */
void panic_begin(void);
/* Ends the run through QEMU's isa-debug-exit: 0 = success (QEMU exits 33),
 * anything else = failure (QEMU exits 35).
 * Falls back to ACPI power-off (set by the m-kernel), then halts. */
void machine_exit(uint32_t status) __attribute__((noreturn));
void halt_forever(void) __attribute__((noreturn));
/* The m-kernel installs its ACPI S5 power-off here; NULL in the p-kernel. */
extern void (*machine_power_off_hook)(void);
