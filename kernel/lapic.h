/* lapic.h: the local APIC of the calling core, in xAPIC (MMIO) or x2APIC
 * (MSR) mode: switching it on, end of interrupt, IPIs and the per-core
 * timer. The m-kernel's start-up uses of it are in mkernel/lapic_boot.h. */
#pragma once
#include <stdint.h>

/* Switches the calling core's APIC on (x2APIC mode if kernel_shared says so). */
void lapic_enable(void);
void lapic_end_of_interrupt(void);
void lapic_send_ipi(uint32_t apic_id, uint8_t vector);
/* Periodic timer on VECTOR_TIMER every `period_ms` milliseconds. */
void lapic_timer_start(uint32_t period_ms);
