/* lapic_boot.h: the boot core's uses of the local APIC: its own APIC ID,
 * INIT and STARTUP IPIs that start the
 * other cores, and measuring the timer against the TSC. */
#pragma once
#include <stdint.h>

uint32_t lapic_id(void);
void lapic_send_init(uint32_t apic_id);
void lapic_send_startup(uint32_t apic_id, uint8_t page);
/* Counts LAPIC timer ticks (divide by 16) over `tsc_ticks` TSC cycles. */
uint64_t lapic_timer_measure(uint64_t tsc_ticks);
