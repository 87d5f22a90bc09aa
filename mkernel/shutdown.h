/* shutdown.h: the orderly end of a run. The m-kernel stops every p-kernel
 * core over the inter-core area before it powers the machine off, so work a
 * core is still doing (or a fault it is taking) is not cut off unseen. */
#pragma once
#include <stdint.h>

/* Stops all other cores (waiting at most a second for each), then exits with
 * `status` (0 = success) through isa-debug-exit or ACPI power-off. */
void shutdown_machine(uint32_t status) __attribute__((noreturn));
