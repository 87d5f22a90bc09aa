/* clock.h: time from the TSC. The boot core measures the TSC against the
 * PIT (or takes CPUID leaf 0x15) and the LAPIC timer against the TSC; the
 * results sit in kernel_shared so every core can turn cycles into time. */
#pragma once
#include <stdint.h>

/* Boot core only: fills tsc_hz, tsc_source and lapic_ticks_per_ms. */
void clock_calibrate(void);
void clock_delay_us(uint64_t microseconds);
uint64_t clock_cycles_to_us(uint64_t cycles);
/* True when CPUID reports an invariant TSC. */
int clock_tsc_invariant(void);
/* Installs the tick handler and starts this core's periodic LAPIC timer. */
void clock_start_tick(uint32_t period_ms);
