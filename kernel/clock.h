/* clock.h: time from the TSC on every core. The boot core calibrates it
 * (mkernel/clock_calibration.h); the results sit in kernel_shared. */
#pragma once
#include <stdint.h>

uint64_t clock_cycles_to_us(uint64_t cycles);
/* Installs the tick handler and starts this core's periodic LAPIC timer. */
void clock_start_tick(uint32_t period_ms);
