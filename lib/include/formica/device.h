/* device.h: the device system calls for user-space drivers (numbers 30-36,
 * see formica/syscalls.h and docs/drivers.md). Each returns what the kernel
 * returns: a value >= 0 or a negative -E_* code. */
#pragma once
#include <formica/syscalls.h>
#include <stdint.h>

/* SYS_SPAWN with SPAWN_* flags (spawn() passes none). */
long spawn_with_flags(const char *program, const char *arguments, uint32_t core, uint32_t priority,
                      uint32_t flags);
/* The same with RIGHT_* for the child (formica/rights.h; 0: the caller's own). */
long spawn_with_rights(const char *program, const char *arguments, uint32_t core, uint32_t priority,
                       uint32_t flags, uint32_t rights);
/* The general form: a zeroed request for `program` (-E_TOO_BIG when a name
 * does not fit); the caller sets flags, rights and quotas, then sends it. */
long spawn_request_fill(struct spawn_request *request, const char *program, const char *arguments,
                        uint32_t core, uint32_t priority);
long spawn_request_send(const struct spawn_request *request);
long pci_config_read(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                     uint32_t width);
long pci_config_write(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                      uint32_t width, uint32_t value);
/* Maps device registers; the returned address corresponds to `physical`. */
long device_map(uint64_t physical, uint64_t bytes);
/* Maps [physical, physical + bytes) in DEVICE_MAP_LIMIT pieces, which the
 * kernel places one after the other: *out is the start. -E_INVALID if they
 * are not contiguous (a persistent-memory range of the pager or the tier). */
long device_map_whole(uint64_t physical, uint64_t bytes, uint8_t **out);
/* A block ICA over the page `physical` of persistent memory the caller has
 * mapped (SYS_ICA_DEVICE_BLOCK): its id; its frame is never freed. */
long device_block_ica(uint64_t physical);
long dma_allocate(uint64_t bytes, struct dma_region *region);
long irq_attach(uint32_t line);
long irq_wait(void);
/* irq_wait that gives up after `milliseconds` (rounded up to timer ticks): 0 then. */
long irq_wait_timeout(uint64_t milliseconds);
/* An MSI vector on the caller's core for PCI function bus:device.function,
 * in place of irq_attach; irq_wait then counts its interrupts. */
long irq_attach_msi(uint32_t bus, uint32_t device, uint32_t function, struct msi_message *message);
/* Puts bytes a keyboard typed into the console input (SYS_CONSOLE_INPUT, at
 * most CONSOLE_INPUT_LIMIT): how many it took. */
long console_input(const void *bytes, uint64_t length);
/* Says a keyboard (CONSOLE_KEYBOARD_USB) is ready (SYS_KEYBOARD_READY). */
long keyboard_ready(uint32_t keyboard);
