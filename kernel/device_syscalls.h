/* device_syscalls.h: the handlers of system calls 30-36 (device access for
 * user-space drivers), listed in kernel/syscall.c's handler table. Each
 * refuses a caller without SPAWN_DRIVER with -E_PERMISSION. */
#pragma once
#include "trap.h"

long sys_pci_config_read(const struct trap_frame *frame);
long sys_pci_config_write(const struct trap_frame *frame);
long sys_device_map(const struct trap_frame *frame);
long sys_dma_allocate(const struct trap_frame *frame);
long sys_irq_attach(const struct trap_frame *frame);
long sys_irq_wait(const struct trap_frame *frame);
long sys_irq_attach_msi(const struct trap_frame *frame);
