/* pci_config.h: PCI configuration space through mechanism #1 (ports 0xcf8
 * and 0xcfc), serialized across cores by a lock in the device state. The
 * caller validates the address; see pci_config_address_ok. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* True when bus < 256, device < 32, function < 8, width is 1, 2 or 4 and
 * offset < 256 is a multiple of width. */
bool pci_config_address_ok(uint64_t bus, uint64_t device, uint64_t function, uint64_t offset,
                           uint64_t width);
uint32_t pci_config_read(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                         uint32_t width);
void pci_config_write(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                      uint32_t width, uint32_t value);
