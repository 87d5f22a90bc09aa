/* msi.h: message-signalled interrupts for user-space drivers. The kernel
 * gives a driver a vector on its own core and the MSI address/data that
 * reach it; the driver writes them into its device's MSI-X table. */
#pragma once
#include <formica/syscalls.h>
#include <stdint.h>
#include "process.h"

/* SYS_IRQ_ATTACH_MSI for `process` (the caller, on its own core) and PCI
 * function bus:device.function: 0 and *message filled, or -E_*. */
long msi_attach(struct process *process, uint64_t bus, uint64_t device, uint64_t function,
                struct msi_message *message);
