/* device_setup.c: allocates kernel_shared->devices and fills it from the
 * MADT. An IOAPIC's pin count comes from its version register (maximum
 * redirection entry + 1). */
#include "device_setup.h"
#include "console.h"
#include "device_state.h"
#include "ioapic_registers.h"
#include "layout.h"
#include "physical_memory.h"
#include "shared.h"

/* The version register holds the maximum redirection entry. */
static uint32_t ioapic_pin_count(struct ioapic_record *ioapic)
{
    return ((ioapic_register_read(ioapic, IOAPIC_REGISTER_VERSION) >> 16) & 0xff) + 1;
}

/* Masks every pin of every IOAPIC (boot: nothing is routed yet). */
static void ioapic_mask_all(struct device_state *devices)
{
    for (uint32_t i = 0; i < devices->ioapic_count; i++)
        for (uint32_t pin = 0; pin < devices->ioapics[i].pins; pin++)
            ioapic_register_write(&devices->ioapics[i], IOAPIC_REGISTER_REDIRECTION + 2 * pin,
                                  IOAPIC_ENTRY_MASKED);
}

static void record_ioapics(struct device_state *devices, const struct madt_info *madt)
{
    for (uint32_t i = 0; i < madt->ioapic_count && i < DEVICE_MAX_IOAPICS; i++) {
        struct ioapic_record *ioapic = &devices->ioapics[devices->ioapic_count++];
        ioapic->id = madt->ioapics[i].id;
        ioapic->gsi_base = madt->ioapics[i].interrupt_base;
        ioapic->registers = phys_to_virt(madt->ioapics[i].address);
        ioapic->pins = ioapic_pin_count(ioapic);
        kprintf("ioapic: id %u at 0x%x, GSIs %u-%u\n", ioapic->id, madt->ioapics[i].address,
                ioapic->gsi_base, ioapic->gsi_base + ioapic->pins - 1);
    }
}

static void record_overrides(struct device_state *devices, const struct madt_info *madt)
{
    for (uint32_t i = 0; i < madt->override_count; i++) {
        const struct madt_override *override = &madt->overrides[i];
        if (override->source >= 16)
            continue;
        devices->isa[override->source] =
            (struct isa_override){.present = 1, .gsi = override->gsi, .flags = override->flags};
    }
}

void device_setup(const struct madt_info *madt)
{
    uint64_t pages = (sizeof(struct device_state) + PAGE_SIZE - 1) / PAGE_SIZE;
    uint64_t physical = physical_allocate(pages, 0);
    if (physical == 0) {
        kprintf("devices: no memory for the device state; device calls are refused\n");
        return;
    }
    struct device_state *devices = phys_to_virt(physical);
    record_ioapics(devices, madt);
    record_overrides(devices, madt);
    kernel_shared->devices = devices;
    ioapic_mask_all(devices);
}
