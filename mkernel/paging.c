/* paging.c: kernel page tables. Physical memory (at least the first 4 GiB,
 * for device registers) is mapped at DIRECT_MAP_BASE with 2 MiB pages; the
 * range from 3 GiB to 4 GiB, where PCs put device memory, is uncached. */
#include "paging.h"
#include "console.h"
#include "layout.h"
#include "panic.h"
#include "physical_memory.h"
#include "shared.h"
#include "x86.h"
#include <stdbool.h>

#define ENTRIES 512
#define DEVICE_HOLE_START (3ull << 30)
#define FOUR_GIB (4ull << 30)

extern char mkernel_physical_end[];

static uint64_t kernel_root;

static unsigned table_index(uint64_t address, unsigned level)
{
    return (address >> (12 + 9 * level)) & (ENTRIES - 1);
}

/* The table that entry `index` of `table` points to, created when absent. */
static uint64_t *next_table(uint64_t *table, unsigned index)
{
    if (!(table[index] & PAGE_PRESENT)) {
        uint64_t frame = physical_allocate(1, 0);
        if (frame == 0)
            return NULL;
        kernel_shared->table_frames++;
        table[index] = frame | PAGE_PRESENT | PAGE_WRITABLE;
    }
    if (table[index] & PAGE_LARGE)
        return NULL;
    return phys_to_virt(table[index] & PAGE_ADDRESS_MASK);
}

static void map_large(uint64_t *root, uint64_t virtual_address, uint64_t physical, uint64_t flags)
{
    uint64_t *level3 = next_table(root, table_index(virtual_address, 3));
    uint64_t *level2 = level3 ? next_table(level3, table_index(virtual_address, 2)) : NULL;
    if (level2 == NULL)
        panic("out of memory building the kernel page tables");
    level2[table_index(virtual_address, 1)] = physical | flags | PAGE_LARGE;
}

/* The last-level entry for `virtual_address` under `root`; with `create`,
 * missing tables are made (user-accessible when `user`, so the leaf decides). */
static uint64_t *leaf_entry(uint64_t root, uint64_t virtual_address, bool create, bool user)
{
    uint64_t *table = phys_to_virt(root);
    for (unsigned level = 3; level >= 1; level--) {
        uint64_t *entry = &table[table_index(virtual_address, level)];
        if (!(*entry & PAGE_PRESENT) && !create)
            return NULL;
        table = next_table(table, table_index(virtual_address, level));
        if (table == NULL)
            return NULL;
        if (user)
            *entry |= PAGE_USER;
    }
    return &table[table_index(virtual_address, 0)];
}

int paging_map_page(uint64_t root, uint64_t virtual_address, uint64_t physical, uint64_t flags)
{
    uint64_t *entry = leaf_entry(root, virtual_address, true, (flags & PAGE_USER) != 0);
    if (entry == NULL)
        return -1;
    *entry = physical | flags | PAGE_PRESENT;
    return 0;
}

uint64_t *paging_find_entry(uint64_t root, uint64_t virtual_address)
{
    return leaf_entry(root, virtual_address, false, false);
}

bool paging_prepare_tables(uint64_t root, uint64_t virtual_address, uint64_t bytes)
{
    uint64_t first = virtual_address & ~(uint64_t)(LARGE_PAGE_SIZE - 1);
    for (uint64_t address = first; address < virtual_address + bytes; address += LARGE_PAGE_SIZE)
        if (leaf_entry(root, address, true, true) == NULL)
            return false;
    return true;
}

uint64_t paging_unmap_page(uint64_t root, uint64_t virtual_address)
{
    uint64_t *entry = leaf_entry(root, virtual_address, false, false);
    if (entry == NULL || !(*entry & PAGE_PRESENT))
        return 0;
    uint64_t physical = *entry & PAGE_ADDRESS_MASK;
    *entry = 0;
    return physical;
}

uint64_t paging_translate(uint64_t root, uint64_t virtual_address)
{
    uint64_t *entry = leaf_entry(root, virtual_address, false, false);
    if (entry == NULL || !(*entry & PAGE_PRESENT))
        return 0;
    return (*entry & PAGE_ADDRESS_MASK) | (virtual_address & (PAGE_SIZE - 1));
}

int paging_map_kernel_page(uint64_t virtual_address, uint64_t physical, uint64_t flags)
{
    int result = paging_map_page(kernel_root, virtual_address, physical, flags);
    invlpg(virtual_address);
    return result;
}

void paging_init(uint64_t usable_end)
{
    kernel_root = physical_allocate(1, 0);
    if (kernel_root == 0)
        panic("out of memory for the kernel page tables");
    uint64_t *root = phys_to_virt(kernel_root);
    uint64_t direct_end = usable_end > FOUR_GIB ? usable_end : FOUR_GIB;
    direct_end = (direct_end + LARGE_PAGE_SIZE - 1) & ~(uint64_t)(LARGE_PAGE_SIZE - 1);
    for (uint64_t physical = 0; physical < direct_end; physical += LARGE_PAGE_SIZE) {
        uint64_t flags = PAGE_PRESENT | PAGE_WRITABLE | PAGE_GLOBAL;
        if (physical >= DEVICE_HOLE_START && physical < FOUR_GIB)
            flags |= PAGE_CACHE_DISABLE | PAGE_WRITE_THROUGH;
        map_large(root, DIRECT_MAP_BASE + physical, physical, flags);
    }
    uint64_t image_end =
        ((uint64_t)mkernel_physical_end + LARGE_PAGE_SIZE - 1) & ~(uint64_t)(LARGE_PAGE_SIZE - 1);
    for (uint64_t physical = 0; physical < image_end; physical += LARGE_PAGE_SIZE)
        map_large(root, MKERNEL_VIRTUAL_BASE + physical, physical,
                  PAGE_PRESENT | PAGE_WRITABLE | PAGE_GLOBAL);
    write_cr3(kernel_root);
    kernel_shared->kernel_root = kernel_root;
    kprintf("paging: %lu MiB direct-mapped at 0x%lx\n", direct_end >> 20,
            (uint64_t)DIRECT_MAP_BASE);
}

uint64_t paging_kernel_root(void)
{
    return kernel_root;
}
