/* pci.c: brute-force enumeration of buses 0-255 through configuration
 * mechanism #1 (a vendor ID of 0xffff means no function), multi-function
 * devices included, and BAR decoding (I/O, 32- and 64-bit memory). */
#include <formica/device.h>
#include <formica/pci.h>

#define OFFSET_VENDOR 0x00
#define OFFSET_COMMAND 0x04
#define OFFSET_CLASS 0x08
#define OFFSET_HEADER_TYPE 0x0e
#define OFFSET_BAR0 0x10
#define OFFSET_STATUS 0x06
#define OFFSET_CAPABILITIES 0x34
#define OFFSET_INTERRUPT_LINE 0x3c
#define STATUS_CAPABILITY_LIST (1u << 4)
#define MAX_CAPABILITIES 48 /* (256 - 64) / 4: a longer list is a loop */
#define COMMAND_IO 1u
#define COMMAND_MEMORY 2u
#define COMMAND_BUS_MASTER 4u
#define COMMAND_INTX_DISABLE (1u << 10)

typedef bool (*pci_match)(const struct pci_function *function, const uint16_t wanted[3]);

static void describe(uint8_t bus, uint8_t device, uint8_t function, uint32_t ids,
                     struct pci_function *out)
{
    uint32_t class_register = (uint32_t)pci_config_read(bus, device, function, OFFSET_CLASS, 4);
    out->bus = bus;
    out->device = device;
    out->function = function;
    out->vendor_id = (uint16_t)ids;
    out->device_id = (uint16_t)(ids >> 16);
    out->class_code = (uint8_t)(class_register >> 24);
    out->subclass = (uint8_t)(class_register >> 16);
    out->interface = (uint8_t)(class_register >> 8);
    out->interrupt_line = (uint8_t)pci_config_read(bus, device, function, OFFSET_INTERRUPT_LINE, 1);
}

static bool find(pci_match match, const uint16_t wanted[3], unsigned index,
                 struct pci_function *found)
{
    for (unsigned bus = 0; bus < 256; bus++) {
        for (unsigned device = 0; device < 32; device++) {
            for (unsigned function = 0; function < 8; function++) {
                long ids = pci_config_read(bus, device, function, OFFSET_VENDOR, 4);
                if (ids < 0 || (ids & 0xffff) == 0xffff) {
                    if (function == 0)
                        break;
                    continue;
                }
                describe(bus, device, function, (uint32_t)ids, found);
                if (match(found, wanted) && index-- == 0)
                    return true;
                long header = pci_config_read(bus, device, 0, OFFSET_HEADER_TYPE, 1);
                if (function == 0 && (header < 0 || !(header & 0x80)))
                    break;
            }
        }
    }
    return false;
}

static bool matches_ids(const struct pci_function *function, const uint16_t wanted[3])
{
    return (wanted[0] == PCI_ANY || function->vendor_id == wanted[0]) &&
           (wanted[1] == PCI_ANY || function->device_id == wanted[1]);
}

static bool matches_class(const struct pci_function *function, const uint16_t wanted[3])
{
    return function->class_code == wanted[0] && function->subclass == wanted[1] &&
           function->interface == wanted[2];
}

bool pci_find_device(uint16_t vendor_id, uint16_t device_id, unsigned index,
                     struct pci_function *found)
{
    const uint16_t wanted[3] = {vendor_id, device_id, 0};
    return find(matches_ids, wanted, index, found);
}

bool pci_find_class(uint8_t class_code, uint8_t subclass, uint8_t interface, unsigned index,
                    struct pci_function *found)
{
    const uint16_t wanted[3] = {class_code, subclass, interface};
    return find(matches_class, wanted, index, found);
}

uint64_t pci_bar(const struct pci_function *function, unsigned number, bool *is_io)
{
    if (number > 5)
        return 0;
    uint32_t offset = OFFSET_BAR0 + 4 * number;
    uint32_t low =
        (uint32_t)pci_config_read(function->bus, function->device, function->function, offset, 4);
    *is_io = (low & 1) != 0;
    if (*is_io)
        return low & ~3u;
    uint64_t address = low & ~0xfull;
    if (((low >> 1) & 3) == 2 && number < 5) /* 64-bit memory BAR */
        address |= (uint64_t)(uint32_t)pci_config_read(function->bus, function->device,
                                                       function->function, offset + 4, 4)
                   << 32;
    return address;
}

uint64_t pci_bar_size(const struct pci_function *function, unsigned number)
{
    bool is_io;
    uint64_t address = pci_bar(function, number, &is_io);
    if (address == 0 || is_io)
        return 0;
    uint32_t offset = OFFSET_BAR0 + 4 * number;
    uint32_t low =
        (uint32_t)pci_config_read(function->bus, function->device, function->function, offset, 4);
    bool wide = ((low >> 1) & 3) == 2 && number < 5;
    uint32_t high = wide ? (uint32_t)(address >> 32) : 0;
    long command =
        pci_config_read(function->bus, function->device, function->function, OFFSET_COMMAND, 2);
    pci_config_write(function->bus, function->device, function->function, OFFSET_COMMAND, 2,
                     (uint32_t)command & ~COMMAND_MEMORY);
    pci_config_write(function->bus, function->device, function->function, offset, 4, ~0u);
    uint64_t mask =
        (uint32_t)pci_config_read(function->bus, function->device, function->function, offset, 4) &
        ~0xfull;
    if (wide) {
        pci_config_write(function->bus, function->device, function->function, offset + 4, 4, ~0u);
        mask |= (uint64_t)(uint32_t)pci_config_read(function->bus, function->device,
                                                    function->function, offset + 4, 4)
                << 32;
        pci_config_write(function->bus, function->device, function->function, offset + 4, 4, high);
    } else {
        mask |= ~0ull << 32;
    }
    pci_config_write(function->bus, function->device, function->function, offset, 4, low);
    pci_config_write(function->bus, function->device, function->function, OFFSET_COMMAND, 2,
                     (uint32_t)command);
    return mask == 0 ? 0 : ~mask + 1;
}

static long read_config(const struct pci_function *function, uint32_t offset, uint32_t width)
{
    return pci_config_read(function->bus, function->device, function->function, offset, width);
}

uint8_t pci_find_capability(const struct pci_function *function, uint8_t id)
{
    long status = read_config(function, OFFSET_STATUS, 2);
    if (status < 0 || !(status & STATUS_CAPABILITY_LIST))
        return 0;
    long next = read_config(function, OFFSET_CAPABILITIES, 1);
    for (int i = 0; i < MAX_CAPABILITIES && next >= 0x40; i++) {
        uint8_t offset = (uint8_t)(next & 0xfc);
        long header = read_config(function, offset, 2);
        if (header < 0)
            return 0;
        if ((header & 0xff) == id)
            return offset;
        next = (header >> 8) & 0xff;
    }
    return 0;
}

void pci_enable(const struct pci_function *function)
{
    long command =
        pci_config_read(function->bus, function->device, function->function, OFFSET_COMMAND, 2);
    if (command < 0)
        return;
    command |= COMMAND_IO | COMMAND_MEMORY | COMMAND_BUS_MASTER;
    command &= ~(long)COMMAND_INTX_DISABLE;
    pci_config_write(function->bus, function->device, function->function, OFFSET_COMMAND, 2,
                     (uint32_t)command);
}
