/* memmap.h: the physical memory map the firmware hands over, made usable:
 * sorted, overlaps resolved in favour of reserved ranges, neighbours merged
 * and usable ranges shrunk to whole pages. Pure logic, tested on the host. */
#pragma once
#include <stddef.h>
#include <stdint.h>

enum memory_type {
    MEMORY_USABLE = 1,
    MEMORY_RESERVED = 2,
    MEMORY_ACPI_RECLAIMABLE = 3,
    MEMORY_ACPI_NVS = 4,
    MEMORY_BAD = 5,
};

struct memory_region {
    uint64_t base;
    uint64_t length;
    uint32_t type;
};

/* Normalizes `regions` in place (capacity entries of room); returns the new
 * count. Ranges wrapping past 2^64 are clipped; zero-length ones dropped. */
size_t memmap_normalize(struct memory_region *regions, size_t count, size_t capacity);
uint64_t memmap_usable_bytes(const struct memory_region *regions, size_t count);
/* One past the last usable byte, or 0 when nothing is usable. */
uint64_t memmap_usable_end(const struct memory_region *regions, size_t count);
