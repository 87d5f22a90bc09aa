/* pci_config.c: PCI configuration reads and writes for the device system
 * calls. The address goes to 0xcf8, the data moves through 0xcfc plus the
 * byte offset within the dword; the pair is held under one lock. */
#include "pci_config.h"
#include "device_state.h"
#include "shared.h"
#include "x86.h"

#define CONFIG_ADDRESS 0xcf8
#define CONFIG_DATA 0xcfc

bool pci_config_address_ok(uint64_t bus, uint64_t device, uint64_t function, uint64_t offset,
                           uint64_t width)
{
    if (bus > 255 || device > 31 || function > 7 || offset > 255)
        return false;
    if (width != 1 && width != 2 && width != 4)
        return false;
    return offset % width == 0;
}

static void select_register(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset)
{
    port_out32(CONFIG_ADDRESS,
               0x80000000u | bus << 16 | device << 11 | function << 8 | (offset & 0xfc));
}

uint32_t pci_config_read(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                         uint32_t width)
{
    struct spinlock *lock = &kernel_shared->devices->pci_lock;
    uint64_t flags = spin_lock(lock);
    select_register(bus, device, function, offset);
    uint32_t value;
    if (width == 4)
        value = port_in32(CONFIG_DATA);
    else if (width == 2)
        value = port_in16(CONFIG_DATA + (offset & 2));
    else
        value = port_in8(CONFIG_DATA + (offset & 3));
    spin_unlock(lock, flags);
    return value;
}

void pci_config_write(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                      uint32_t width, uint32_t value)
{
    struct spinlock *lock = &kernel_shared->devices->pci_lock;
    uint64_t flags = spin_lock(lock);
    select_register(bus, device, function, offset);
    if (width == 4)
        port_out32(CONFIG_DATA, value);
    else if (width == 2)
        port_out16(CONFIG_DATA + (offset & 2), (uint16_t)value);
    else
        port_out8(CONFIG_DATA + (offset & 3), (uint8_t)value);
    spin_unlock(lock, flags);
}
