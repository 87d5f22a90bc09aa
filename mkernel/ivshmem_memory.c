/* ivshmem_memory.c: the ivshmem-plain devices (1af4:1110) the firmware
 * placed, found at boot: BAR 2 of each is another machine's NVDIMM file
 * (build/run --memnode-ivshmem), so it is recorded with the persistent
 * ranges and mapped write-back into the drivers that ask (device_memory.c). */
#include "ivshmem_memory.h"
#include "console.h"
#include "persistent_memory.h"
#include "pci_config.h"
#include "shared.h"

#define IVSHMEM_IDS 0x11101af4u /* device 0x1110, vendor 0x1af4 (Red Hat) */
#define OFFSET_COMMAND 0x04
#define OFFSET_HEADER_TYPE 0x0e
#define OFFSET_BAR2 0x18
#define COMMAND_MEMORY 2u
#define BAR_TYPE_64 4u /* bits 2:1 = 2 */

/* BAR 2's size: all ones written with decoding off, read back, restored. */
static uint64_t bar2_size(uint32_t bus, uint32_t device, uint32_t function, uint64_t low,
                          uint64_t high)
{
    uint32_t command = pci_config_read(bus, device, function, OFFSET_COMMAND, 2);
    pci_config_write(bus, device, function, OFFSET_COMMAND, 2, command & ~COMMAND_MEMORY);
    pci_config_write(bus, device, function, OFFSET_BAR2, 4, 0xffffffffu);
    pci_config_write(bus, device, function, OFFSET_BAR2 + 4, 4, 0xffffffffu);
    uint64_t mask = pci_config_read(bus, device, function, OFFSET_BAR2, 4) & ~0xfull;
    mask |= (uint64_t)pci_config_read(bus, device, function, OFFSET_BAR2 + 4, 4) << 32;
    pci_config_write(bus, device, function, OFFSET_BAR2, 4, (uint32_t)low);
    pci_config_write(bus, device, function, OFFSET_BAR2 + 4, 4, (uint32_t)high);
    pci_config_write(bus, device, function, OFFSET_COMMAND, 2, command);
    return mask == 0 ? 0 : ~mask + 1;
}

static void record(uint32_t bus, uint32_t device, uint32_t function)
{
    uint32_t low = pci_config_read(bus, device, function, OFFSET_BAR2, 4);
    if ((low & 1) || (low & 6) != BAR_TYPE_64) {
        kprintf("ivshmem: %u:%u.%u: BAR 2 is not 64-bit memory: not used\n", bus, device, function);
        return;
    }
    uint32_t high = pci_config_read(bus, device, function, OFFSET_BAR2 + 4, 4);
    uint64_t base = ((uint64_t)high << 32 | low) & ~0xfull;
    uint64_t bytes = bar2_size(bus, device, function, low, high);
    if (base == 0 || bytes == 0) {
        kprintf("ivshmem: %u:%u.%u: BAR 2 not placed by the firmware: not used\n", bus, device,
                function);
        return;
    }
    kprintf("ivshmem: %u:%u.%u: BAR 2 at 0x%lx, %lu MiB: shared memory (another machine's "
            "NVDIMM file)\n",
            bus, device, function, base, bytes >> 20);
    persistent_memory_add_shared(base, bytes, "ivshmem BAR 2");
}

void ivshmem_memory_init(void)
{
    if (kernel_shared->devices == NULL)
        return;
    for (uint32_t bus = 0; bus < 256; bus++) {
        for (uint32_t device = 0; device < 32; device++) {
            for (uint32_t function = 0; function < 8; function++) {
                uint32_t ids = pci_config_read(bus, device, function, 0, 4);
                if ((ids & 0xffff) == 0xffff) {
                    if (function == 0)
                        break;
                    continue;
                }
                if (ids == IVSHMEM_IDS)
                    record(bus, device, function);
                uint32_t header = pci_config_read(bus, device, 0, OFFSET_HEADER_TYPE, 1);
                if (function == 0 && !(header & 0x80))
                    break;
            }
        }
    }
}
