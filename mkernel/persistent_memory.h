/* persistent_memory.h: the NVDIMMs' persistent-memory ranges, from the ACPI
 * NFIT at boot, and the memory type they get: the m-kernel maps them
 * write-back into the drivers that ask (device_memory.c), so their users
 * order durability with the flush layer (docs/design.md, "The flush
 * layer"), and says at boot what PAT and MTRRs make of that mapping. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define PERSISTENT_RANGES_MAX 24 /* the NFIT's and one shared BAR per memory node */

/* Reads the NFIT's ranges and prints, per range, its memory type; once at
 * boot, after ACPI. */
void persistent_memory_init(void);
/* A shared-memory BAR that is another machine's NVDIMM file (ivshmem,
 * mkernel/ivshmem_memory.c): mapped write-back like the NFIT's ranges, its
 * type printed; false (and said) when the table is full. */
bool persistent_memory_add_shared(uint64_t base, uint64_t bytes, const char *what);
/* True when `base` lies in such a shared range (not the NFIT's). */
bool persistent_memory_is_shared(uint64_t base);
/* True when [base, end) lies inside one persistent-memory range. */
bool persistent_memory_holds(uint64_t base, uint64_t end);
