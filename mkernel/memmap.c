/* memmap.c: normalization of the firmware memory map. The map is cut at
 * every region boundary into elementary pieces; each piece takes the most
 * restrictive type covering it; equal neighbours merge again. */
#include "memmap.h"
#include <stdbool.h>

#define PAGE_BYTES 4096ull

static uint64_t region_end(const struct memory_region *region)
{
    uint64_t end = region->base + region->length;
    return end < region->base ? UINT64_MAX : end;
}

/* Higher value = more restrictive: anything beats usable. */
static uint32_t type_rank(uint32_t type)
{
    if (type == MEMORY_USABLE)
        return 0;
    if (type == MEMORY_ACPI_RECLAIMABLE)
        return 1;
    if (type == MEMORY_ACPI_NVS)
        return 2;
    if (type == MEMORY_BAD)
        return 4;
    return 3;
}

static void sort_by_base(struct memory_region *regions, size_t count)
{
    for (size_t i = 1; i < count; i++) {
        struct memory_region key = regions[i];
        size_t j = i;
        while (j > 0 && regions[j - 1].base > key.base) {
            regions[j] = regions[j - 1];
            j--;
        }
        regions[j] = key;
    }
}

/* Type of the point `address` (the most restrictive cover), 0 if uncovered. */
static uint32_t type_at(const struct memory_region *regions, size_t count, uint64_t address)
{
    uint32_t best = 0;
    bool covered = false;
    for (size_t i = 0; i < count; i++) {
        if (address >= regions[i].base && address < region_end(&regions[i])) {
            if (!covered || type_rank(regions[i].type) > type_rank(best))
                best = regions[i].type;
            covered = true;
        }
    }
    return best;
}

/* The smallest boundary (base or end of any region) strictly above `address`. */
static uint64_t next_boundary(const struct memory_region *regions, size_t count, uint64_t address)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < count; i++) {
        uint64_t points[2] = {regions[i].base, region_end(&regions[i])};
        for (int k = 0; k < 2; k++)
            if (points[k] > address && points[k] < next)
                next = points[k];
    }
    return next;
}

static void shrink_usable_to_pages(struct memory_region *region)
{
    if (region->type != MEMORY_USABLE)
        return;
    if (region->base > UINT64_MAX - (PAGE_BYTES - 1)) { /* rounding up would wrap to 0 */
        region->length = 0;
        return;
    }
    uint64_t end = region->base + region->length;
    uint64_t base = (region->base + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
    end &= ~(PAGE_BYTES - 1);
    region->base = base;
    region->length = end > base ? end - base : 0;
}

size_t memmap_normalize(struct memory_region *regions, size_t count, size_t capacity)
{
    /* Work on a sorted copy of the input; write the result back into `regions`. */
    struct memory_region input[128];
    size_t input_count = 0;
    for (size_t i = 0; i < count && input_count < 128; i++) {
        if (regions[i].length == 0)
            continue;
        input[input_count] = regions[i];
        input[input_count].length = region_end(&regions[i]) - regions[i].base;
        input_count++;
    }
    sort_by_base(input, input_count);
    size_t output = 0;
    uint64_t address = input_count > 0 ? input[0].base : 0;
    while (input_count > 0 && address != UINT64_MAX) {
        uint64_t next = next_boundary(input, input_count, address);
        uint32_t type = type_at(input, input_count, address);
        if (type != 0) {
            if (output > 0 && regions[output - 1].type == type &&
                region_end(&regions[output - 1]) == address)
                regions[output - 1].length += next - address;
            else if (output < capacity)
                regions[output++] = (struct memory_region){address, next - address, type};
        }
        address = next;
    }
    size_t kept = 0;
    for (size_t i = 0; i < output; i++) {
        shrink_usable_to_pages(&regions[i]);
        if (regions[i].length > 0)
            regions[kept++] = regions[i];
    }
    return kept;
}

uint64_t memmap_usable_bytes(const struct memory_region *regions, size_t count)
{
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++)
        if (regions[i].type == MEMORY_USABLE)
            total += regions[i].length;
    return total;
}

uint64_t memmap_usable_end(const struct memory_region *regions, size_t count)
{
    uint64_t end = 0;
    for (size_t i = 0; i < count; i++)
        if (regions[i].type == MEMORY_USABLE && region_end(&regions[i]) > end)
            end = region_end(&regions[i]);
    return end;
}
