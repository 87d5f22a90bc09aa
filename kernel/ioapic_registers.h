/* ioapic_registers.h: an IOAPIC's index/data register pair and its
 * redirection entries (entry n: registers 0x10 + 2n low, 0x11 + 2n high),
 * shared by kernel/ioapic.c and the m-kernel's boot set-up. */
#pragma once
#include <stdint.h>
#include "device_state.h"

#define IOAPIC_REGISTER_VERSION 1
#define IOAPIC_REGISTER_REDIRECTION 0x10
#define IOAPIC_ENTRY_ACTIVE_LOW (1u << 13)
#define IOAPIC_ENTRY_LEVEL (1u << 15)
#define IOAPIC_ENTRY_MASKED (1u << 16)

static inline uint32_t ioapic_register_read(struct ioapic_record *ioapic, uint32_t index)
{
    ioapic->registers[0] = index;
    return ioapic->registers[4];
}

static inline void ioapic_register_write(struct ioapic_record *ioapic, uint32_t index,
                                         uint32_t value)
{
    ioapic->registers[0] = index;
    ioapic->registers[4] = value;
}
