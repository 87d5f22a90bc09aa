/* physical_memory.c: sets up the frame allocator from the boot map. The
 * bitmap itself is carved from the first usable range above the kernel that
 * holds it; all frames are handed out zeroed. */
#include "physical_memory.h"
#include "shared.h"
#include "console.h"
#include "layout.h"
#include "panic.h"
#include <string.h>

extern char mkernel_physical_end[]; /* from the linker script */

static struct frame_allocator frames;
static uint64_t usable_end;
static const struct boot_information *boot_map; /* kept for physical_is_memory */

static void reserve_in_use(struct boot_information *boot, uint64_t bitmap, uint64_t bitmap_bytes)
{
    frame_reserve_range(&frames, 0, 0x100000); /* BIOS, trampoline, real-mode data */
    frame_reserve_range(&frames, 0x100000, (uint64_t)mkernel_physical_end - 0x100000);
    frame_reserve_range(&frames, boot->info_start, boot->info_end - boot->info_start);
    for (uint32_t i = 0; i < boot->module_count; i++)
        frame_reserve_range(&frames, boot->modules[i].start,
                            boot->modules[i].end - boot->modules[i].start);
    frame_reserve_range(&frames, bitmap, bitmap_bytes);
}

/* A usable place for `bytes` that overlaps nothing the loader put in memory. */
static uint64_t find_bitmap_home(struct boot_information *boot, uint64_t bytes)
{
    uint64_t floor = ((uint64_t)mkernel_physical_end + FRAME_SIZE - 1) & ~(FRAME_SIZE - 1);
    if (boot->info_end > floor)
        floor = (boot->info_end + FRAME_SIZE - 1) & ~(FRAME_SIZE - 1);
    for (uint32_t i = 0; i < boot->module_count; i++)
        if (boot->modules[i].end > floor)
            floor = (boot->modules[i].end + FRAME_SIZE - 1) & ~(FRAME_SIZE - 1);
    for (uint32_t i = 0; i < boot->region_count; i++) {
        struct memory_region *region = &boot->regions[i];
        if (region->type != MEMORY_USABLE)
            continue;
        uint64_t start = region->base > floor ? region->base : floor;
        if (start + bytes <= region->base + region->length && start + bytes <= (4ull << 30))
            return start;
    }
    return 0;
}

void physical_memory_init(struct boot_information *boot)
{
    boot_map = boot;
    boot->region_count = memmap_normalize(boot->regions, boot->region_count, BOOT_MAX_REGIONS);
    uint64_t usable = memmap_usable_bytes(boot->regions, boot->region_count);
    usable_end = memmap_usable_end(boot->regions, boot->region_count);
    if (usable < MINIMUM_MEMORY_BYTES)
        panic("too little memory: %lu KiB usable, Formica needs at least %lu KiB", usable >> 10,
              MINIMUM_MEMORY_BYTES >> 10);
    uint64_t frame_count = usable_end / FRAME_SIZE;
    uint64_t bitmap_bytes = frame_bitmap_bytes(frame_count);
    uint64_t bitmap = find_bitmap_home(boot, bitmap_bytes);
    if (bitmap == 0)
        panic("no room below 4 GiB for the frame bitmap (%lu bytes)", bitmap_bytes);
    frame_allocator_init(&frames, phys_to_virt(bitmap), frame_count);
    for (uint32_t i = 0; i < boot->region_count; i++)
        if (boot->regions[i].type == MEMORY_USABLE)
            frame_release_range(&frames, boot->regions[i].base, boot->regions[i].length);
    reserve_in_use(boot, bitmap, bitmap_bytes);
    kernel_shared->frames_total = frames.free_count;
    kernel_shared->frames_free = frames.free_count;
    kprintf("memory: %lu MiB usable, %lu MiB free, highest usable address 0x%lx\n", usable >> 20,
            frames.free_count * FRAME_SIZE >> 20, usable_end);
}

uint64_t physical_allocate(uint64_t count, uint64_t limit)
{
    uint64_t physical = frame_allocate(&frames, count, 1, limit);
    if (physical == FRAME_NONE)
        return 0;
    kernel_shared->frames_free = frames.free_count;
    memset(phys_to_virt(physical), 0, count * FRAME_SIZE);
    return physical;
}

void physical_free(uint64_t physical, uint64_t count)
{
    if (!frame_free(&frames, physical, count))
        kprintf("memory: refused to free %lu frames at 0x%lx (not allocated)\n", count, physical);
    kernel_shared->frames_free = frames.free_count;
}

uint64_t physical_free_bytes(void)
{
    return frames.free_count * FRAME_SIZE;
}

uint64_t physical_usable_end(void)
{
    return usable_end;
}

static bool region_is_memory(const struct memory_region *region)
{
    return region->type == MEMORY_USABLE || region->type == MEMORY_ACPI_RECLAIMABLE ||
           region->type == MEMORY_ACPI_NVS;
}

bool physical_is_memory(uint64_t base, uint64_t length)
{
    if (base < 0xa0000)
        return true; /* conventional memory below the VGA hole */
    for (uint32_t i = 0; boot_map != NULL && i < boot_map->region_count; i++) {
        const struct memory_region *region = &boot_map->regions[i];
        if (region_is_memory(region) && base < region->base + region->length &&
            region->base < base + length)
            return true;
    }
    return false;
}
