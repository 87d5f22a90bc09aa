/* ivshmem_memory.h: finds the ivshmem-plain devices at boot and records
 * BAR 2 of each (another machine's NVDIMM file, shared) as persistent memory
 * mapped write-back (mkernel/ivshmem_memory.c). */
#pragma once

/* Once at boot, after device_setup (the PCI lock) and persistent_memory_init. */
void ivshmem_memory_init(void);
