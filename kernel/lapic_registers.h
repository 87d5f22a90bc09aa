/* lapic_registers.h: the local APIC's register offsets and the two access
 * paths (xAPIC: 32-bit MMIO words at the shared mapping; x2APIC: MSR 0x800
 * + offset/16), shared by kernel/lapic.c and the m-kernel's start-up code. */
#pragma once
#include <stdint.h>
#include "shared.h"
#include "x86.h"

#define LAPIC_REGISTER_ID 0x20
#define LAPIC_REGISTER_TASK_PRIORITY 0x80
#define LAPIC_REGISTER_EOI 0xb0
#define LAPIC_REGISTER_SPURIOUS 0xf0
#define LAPIC_REGISTER_ICR_LOW 0x300
#define LAPIC_REGISTER_ICR_HIGH 0x310
#define LAPIC_REGISTER_LVT_TIMER 0x320
#define LAPIC_REGISTER_TIMER_INITIAL 0x380
#define LAPIC_REGISTER_TIMER_CURRENT 0x390
#define LAPIC_REGISTER_TIMER_DIVIDE 0x3e0

#define LAPIC_ICR_PENDING (1u << 12)
#define LAPIC_ICR_ASSERT (1u << 14)
#define LAPIC_ICR_INIT (5u << 8)
#define LAPIC_ICR_STARTUP (6u << 8)
#define LAPIC_LVT_MASKED (1u << 16)
#define LAPIC_LVT_PERIODIC (1u << 17)
#define LAPIC_TIMER_DIVIDE_BY_16 0x3

static inline uint32_t lapic_read(uint32_t offset)
{
    if (kernel_shared->x2apic)
        return (uint32_t)rdmsr(0x800 + (offset >> 4));
    return *(volatile uint32_t *)(kernel_shared->lapic_mmio + offset);
}

static inline void lapic_write(uint32_t offset, uint32_t value)
{
    if (kernel_shared->x2apic)
        wrmsr(0x800 + (offset >> 4), value);
    else
        *(volatile uint32_t *)(kernel_shared->lapic_mmio + offset) = value;
}

/* Writes the interrupt command register: `command` to the core `apic_id`. */
void lapic_send_command(uint32_t apic_id, uint32_t command);
