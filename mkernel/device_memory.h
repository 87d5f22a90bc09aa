/* device_memory.h: the m-kernel's part of device access: who may be a
 * driver, device-register mappings, DMA memory, and the clean-up when a
 * driver ends. Page tables change here only. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "intercore.h"
#include "process.h"

/* 0 when a process `parent` may spawn a child with `flags`, else -E_*. */
long device_spawn_check(uint32_t flags, uint32_t parent);
/* Records the new process's rights; a driver gets IOPL 3 in its first rflags. */
void device_process_start(struct process *process, uint32_t flags);
/* Frees the interrupt line of an ended process (its memory goes with its address space). */
void device_process_end(struct process *process);
/* True when `physical` lies in persistent memory the driver `pid` has mapped
 * with SYS_DEVICE_MAP (the pages SYS_ICA_DEVICE_BLOCK accepts). */
bool device_maps_persistent(uint32_t pid, uint64_t physical);
/* Its inter-core services (serve_*) are declared in formica/protocol/mkernel_services.h. */
