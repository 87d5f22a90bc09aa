/* ioapic.c: programs IOAPIC redirection entries. Entry n is registers 0x10
 * + 2n (low: vector, polarity, trigger, mask) and 0x11 + 2n (destination
 * APIC ID in bits 24-31). Masking every pin at boot is mkernel/device_setup.c. */
#include "ioapic.h"
#include "device_state.h"
#include "ioapic_registers.h"
#include "shared.h"

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
    uint32_t low =
        vector | (level ? IOAPIC_ENTRY_LEVEL : 0) | (active_low ? IOAPIC_ENTRY_ACTIVE_LOW : 0);
    uint64_t flags = spin_lock(&kernel_shared->devices->ioapic_lock);
    ioapic_register_write(ioapic, IOAPIC_REGISTER_REDIRECTION + 2 * pin, IOAPIC_ENTRY_MASKED);
    ioapic_register_write(ioapic, IOAPIC_REGISTER_REDIRECTION + 2 * pin + 1, apic_id << 24);
    ioapic_register_write(ioapic, IOAPIC_REGISTER_REDIRECTION + 2 * pin, low);
    spin_unlock(&kernel_shared->devices->ioapic_lock, flags);
}

void ioapic_set_masked(uint32_t gsi, bool masked)
{
    uint32_t pin;
    struct ioapic_record *ioapic = ioapic_of(gsi, &pin);
    if (ioapic == NULL)
        return;
    uint64_t flags = spin_lock(&kernel_shared->devices->ioapic_lock);
    uint32_t low = ioapic_register_read(ioapic, IOAPIC_REGISTER_REDIRECTION + 2 * pin);
    low = masked ? (low | IOAPIC_ENTRY_MASKED) : (low & ~IOAPIC_ENTRY_MASKED);
    ioapic_register_write(ioapic, IOAPIC_REGISTER_REDIRECTION + 2 * pin, low);
    spin_unlock(&kernel_shared->devices->ioapic_lock, flags);
}
