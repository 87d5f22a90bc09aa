/* physical_memory.h: the m-kernel's frames. Built from the boot memory map
 * minus everything already in use (low 1 MiB, the kernel image, the loader's
 * structures and modules); the only allocator of physical memory in Formica. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "boot_information.h"
#include "frame.h"

#define MINIMUM_MEMORY_BYTES (24ul << 20)

/* Sets up the allocator; panics with a clear message when memory is too small. */
void physical_memory_init(struct boot_information *boot);
/* `count` zeroed contiguous frames below `limit` (0 = anywhere); 0 when none. */
uint64_t physical_allocate(uint64_t count, uint64_t limit);
void physical_free(uint64_t physical, uint64_t count);
uint64_t physical_free_bytes(void);
uint64_t physical_usable_end(void);
/* True when [base, base+length) overlaps memory in the boot map (usable or
 * ACPI): such a range is RAM, never device registers. */
bool physical_is_memory(uint64_t base, uint64_t length);
