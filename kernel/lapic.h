/* lapic.h: the local APIC of the calling core, in xAPIC (MMIO) or x2APIC
 * (MSR) mode: identity, end of interrupt, IPIs, INIT/SIPI for AP start-up
 * and the per-core timer. */
#pragma once
#include <stdint.h>

/* Switches the calling core's APIC on (x2APIC mode if kernel_shared says so). */
void lapic_enable(void);
uint32_t lapic_id(void);
void lapic_end_of_interrupt(void);
void lapic_send_ipi(uint32_t apic_id, uint8_t vector);
void lapic_send_init(uint32_t apic_id);
void lapic_send_startup(uint32_t apic_id, uint8_t page);
/* Periodic timer on VECTOR_TIMER every `period_ms` milliseconds. */
void lapic_timer_start(uint32_t period_ms);
/* Counts LAPIC timer ticks (divide by 16) over `tsc_ticks` TSC cycles. */
uint64_t lapic_timer_measure(uint64_t tsc_ticks);
/* True when the processor can run its APIC in x2APIC mode. */
int lapic_x2apic_supported(void);
