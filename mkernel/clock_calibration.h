/* clock_calibration.h: the boot core measures the TSC against the PIT (or
 * takes CPUID leaf 0x15) and the LAPIC timer against the TSC; the results
 * sit in kernel_shared so every core can turn cycles into time (clock.h). */
#pragma once
#include <stdint.h>

/* Fills kernel_shared's tsc_hz, tsc_source and lapic_ticks_per_ms. */
void clock_calibrate(void);
/* Busy-waits `microseconds` on the calibrated TSC (AP start-up delays). */
void clock_delay_us(uint64_t microseconds);
