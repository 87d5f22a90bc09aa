/* pci.h: PCI enumeration in user space over the configuration system calls
 * (drivers only): find a function by vendor/device or by class, read its
 * BARs and interrupt line, enable it as a bus master. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct pci_function {
    uint8_t bus, device, function;
    uint16_t vendor_id, device_id;
    uint8_t class_code, subclass, interface;
    uint8_t interrupt_line; /* the ISA IRQ the firmware chose (irq_attach takes it) */
};

#define PCI_ANY 0xffff

/* The `index`-th function (0 = first) that matches; false when none is left.
 * PCI_ANY matches anything in a field. */
bool pci_find_device(uint16_t vendor_id, uint16_t device_id, unsigned index,
                     struct pci_function *found);
bool pci_find_class(uint8_t class_code, uint8_t subclass, uint8_t interface, unsigned index,
                    struct pci_function *found);
/* BAR `number`: its address (I/O port or memory), with *is_io set; 0 when absent. */
uint64_t pci_bar(const struct pci_function *function, unsigned number, bool *is_io);
/* Memory BAR `number`'s size in bytes (0: absent or I/O), found by writing
 * all ones with memory decoding off and restoring it: call it before the
 * BAR is in use (nothing may touch the device meanwhile). */
uint64_t pci_bar_size(const struct pci_function *function, unsigned number);
/* The configuration-space offset of the function's first capability with
 * this ID (0x05 MSI, 0x11 MSI-X, ...), or 0 when it has none. */
uint8_t pci_find_capability(const struct pci_function *function, uint8_t id);
/* Turns on I/O and memory decoding and bus mastering, and INTx delivery. */
void pci_enable(const struct pci_function *function);
