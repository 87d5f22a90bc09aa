/* ioapic.c: programs IOAPIC redirection entries. Entry n is registers 0x10
 * + 2n (low: vector, polarity, trigger, mask) and 0x11 + 2n (destination
 * APIC ID in bits 24-31). */
#include "ioapic.h"
#include "device_state.h"
#include "shared.h"

#define REGISTER_REDIRECTION 0x10
#define ENTRY_ACTIVE_LOW (1u << 13)
#define ENTRY_LEVEL (1u << 15)
#define ENTRY_MASKED (1u << 16)

static struct ioapic_record *ioapic_of(uint32_t gsi, uint32_t *pin)
{
    struct device_state *devices = kernel_shared->devices;
    for (uint32_t i = 0; devices != NULL && i < devices->ioapic_count; i++) {
        struct ioapic_record *ioapic = &devices->ioapics[i];
        if (gsi >= ioapic->gsi_base && gsi < ioapic->gsi_base + ioapic->pins) {
            *pin = gsi - ioapic->gsi_base;
            return ioapic;
        }
    }
    return NULL;
}

static uint32_t register_read(struct ioapic_record *ioapic, uint32_t index)
{
    ioapic->registers[0] = index;
    return ioapic->registers[4];
}

static void register_write(struct ioapic_record *ioapic, uint32_t index, uint32_t value)
{
    ioapic->registers[0] = index;
    ioapic->registers[4] = value;
}

bool ioapic_has_gsi(uint32_t gsi)
{
    uint32_t pin;
    return ioapic_of(gsi, &pin) != NULL;
}

void ioapic_route(uint32_t gsi, uint8_t vector, uint32_t apic_id, bool level, bool active_low)
{
    uint32_t pin;
    struct ioapic_record *ioapic = ioapic_of(gsi, &pin);
    if (ioapic == NULL)
        return;
    uint32_t low = vector | (level ? ENTRY_LEVEL : 0) | (active_low ? ENTRY_ACTIVE_LOW : 0);
    uint64_t flags = spin_lock(&kernel_shared->devices->ioapic_lock);
    register_write(ioapic, REGISTER_REDIRECTION + 2 * pin, ENTRY_MASKED);
    register_write(ioapic, REGISTER_REDIRECTION + 2 * pin + 1, apic_id << 24);
    register_write(ioapic, REGISTER_REDIRECTION + 2 * pin, low);
    spin_unlock(&kernel_shared->devices->ioapic_lock, flags);
}

void ioapic_set_masked(uint32_t gsi, bool masked)
{
    uint32_t pin;
    struct ioapic_record *ioapic = ioapic_of(gsi, &pin);
    if (ioapic == NULL)
        return;
    uint64_t flags = spin_lock(&kernel_shared->devices->ioapic_lock);
    uint32_t low = register_read(ioapic, REGISTER_REDIRECTION + 2 * pin);
    low = masked ? (low | ENTRY_MASKED) : (low & ~ENTRY_MASKED);
    register_write(ioapic, REGISTER_REDIRECTION + 2 * pin, low);
    spin_unlock(&kernel_shared->devices->ioapic_lock, flags);
}

void ioapic_mask_all(void)
{
    struct device_state *devices = kernel_shared->devices;
    for (uint32_t i = 0; i < devices->ioapic_count; i++)
        for (uint32_t pin = 0; pin < devices->ioapics[i].pins; pin++)
            register_write(&devices->ioapics[i], REGISTER_REDIRECTION + 2 * pin, ENTRY_MASKED);
}
