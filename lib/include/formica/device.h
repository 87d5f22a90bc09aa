/* device.h: the device system calls for user-space drivers (numbers 30-36,
 * see formica/syscalls.h and docs/drivers.md). Each returns what the kernel
 * returns: a value >= 0 or a negative -E_* code. */
#pragma once
#include <formica/syscalls.h>
#include <stdint.h>

/* SYS_SPAWN with SPAWN_* flags (spawn() passes none). */
long spawn_with_flags(const char *program, const char *arguments, uint32_t core, uint32_t priority,
                      uint32_t flags);
long pci_config_read(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                     uint32_t width);
long pci_config_write(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                      uint32_t width, uint32_t value);
/* Maps device registers; the returned address corresponds to `physical`. */
long device_map(uint64_t physical, uint64_t bytes);
long dma_allocate(uint64_t bytes, struct dma_region *region);
long irq_attach(uint32_t line);
long irq_wait(void);
/* irq_wait that gives up after `milliseconds` (rounded up to timer ticks): 0 then. */
long irq_wait_timeout(uint64_t milliseconds);
/* An MSI vector on the caller's core for PCI function bus:device.function,
 * in place of irq_attach; irq_wait then counts its interrupts. */
long irq_attach_msi(uint32_t bus, uint32_t device, uint32_t function, struct msi_message *message);
