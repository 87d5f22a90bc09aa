/* address_space.c: user address spaces. Frames for pages and tables come
 * from the m-kernel's allocator; destroying an address space walks its user
 * half and returns every frame, so an exited process leaks nothing. */
#include "address_space.h"
#include "layout.h"
#include "paging.h"
#include "physical_memory.h"
#include "process.h"
#include "shared.h"
#include "translation_stamp.h"
#include <formica/errors.h>
#include <formica/ica.h>
#include <string.h>

#define KERNEL_HALF_FIRST_ENTRY 256

uint64_t address_space_create(void)
{
    uint64_t root = physical_allocate(1, 0);
    if (root == 0)
        return 0;
    uint64_t *entries = phys_to_virt(root);
    const uint64_t *kernel = phys_to_virt(kernel_shared->kernel_root);
    for (int i = KERNEL_HALF_FIRST_ENTRY; i < 512; i++)
        entries[i] = kernel[i];
    return root;
}

static void unmap_range(uint64_t root, uint64_t virtual_address, uint64_t pages)
{
    for (uint64_t i = 0; i < pages; i++) {
        uint64_t frame = paging_unmap_page(root, virtual_address + i * PAGE_SIZE);
        if (frame != 0)
            physical_free(frame, 1);
    }
    translations_dropped_everywhere();
}

long address_space_map_new(uint64_t root, uint64_t virtual_address, uint64_t pages, int writable)
{
    if (pages > physical_free_bytes() / PAGE_SIZE)
        return -E_NO_MEMORY;
    uint64_t flags = PAGE_USER | (writable ? PAGE_WRITABLE : 0);
    for (uint64_t i = 0; i < pages; i++) {
        uint64_t frame = physical_allocate(1, 0);
        if (frame == 0 ||
            paging_map_page(root, virtual_address + i * PAGE_SIZE, frame, flags) != 0) {
            if (frame != 0)
                physical_free(frame, 1);
            unmap_range(root, virtual_address, i);
            return -E_NO_MEMORY;
        }
    }
    return 0;
}

/* The root entries that cover only ICA windows: their pages are the ICA
 * pools' (ica_release_process takes them back), never the process's, whose
 * own memory ends below USER_PROGRAM_END (the loader and the heap keep to it). */
#define ROOT_INDEX(address) ((address) >> 39 & 511)
_Static_assert(ROOT_INDEX(ICA_CONTROL_BASE) ==
                       ROOT_INDEX(ICA_CONTROL_BASE + ICA_CONTROL_SLOTS * 4096ull - 1) &&
                   ROOT_INDEX(ICA_DATA_BASE) ==
                       ROOT_INDEX(ICA_DATA_BASE + ICA_DATA_SLOTS * (uint64_t)ICA_DATA_MAX_BYTES -
                                  1) &&
                   ROOT_INDEX(ICA_BLOCK_BASE) ==
                       ROOT_INDEX(ICA_BLOCK_BASE + ICA_BLOCK_SLOTS * 4096ull - 1),
               "each ICA window lies under one root entry of its own");
_Static_assert(ROOT_INDEX(USER_PROGRAM_END - 1) < ROOT_INDEX(ICA_CONTROL_BASE),
               "a process's own memory lies under no ICA window's root entry");

static bool covers_ica_window(int root_index)
{
    return root_index == ROOT_INDEX(ICA_CONTROL_BASE) || root_index == ROOT_INDEX(ICA_DATA_BASE) ||
           root_index == ROOT_INDEX(ICA_BLOCK_BASE);
}

/* Whether any of the four entries from `entries` maps something: most of a
 * table is empty, so free_tables skips it four entries at a time. */
static inline bool present_among_four(const uint64_t *entries)
{
    return ((entries[0] | entries[1] | entries[2] | entries[3]) & PAGE_PRESENT) != 0;
}

/* Frees the tables below `table` at `level` (3 = the level under the root)
 * and, when `frames_are_its_own`, the frames they map; otherwise (an ICA
 * window) the leaf tables are freed unread. */
static void free_tables(uint64_t table_physical, int level, bool frames_are_its_own)
{
    uint64_t *table = phys_to_virt(table_physical);
    for (int i = 0; i < 512; i++) {
        if (i % 4 == 0 && !present_among_four(&table[i])) {
            i += 3;
            continue;
        }
        if (!(table[i] & PAGE_PRESENT))
            continue;
        uint64_t next = table[i] & PAGE_ADDRESS_MASK;
        if (level > 0) {
            if (level > 1 || frames_are_its_own)
                free_tables(next, level - 1, frames_are_its_own);
            kernel_shared->table_frames--;
        } else if (table[i] & PAGE_DEVICE) {
            continue; /* device registers, not a frame of ours */
        }
        physical_free(next, 1);
    }
}

void address_space_destroy(uint64_t root)
{
    translations_dropped_everywhere(); /* a core may still hold it: a new space may reuse it */
    uint64_t *entries = phys_to_virt(root);
    for (int i = 0; i < KERNEL_HALF_FIRST_ENTRY; i++) {
        if (!(entries[i] & PAGE_PRESENT))
            continue;
        free_tables(entries[i] & PAGE_ADDRESS_MASK, 2, !covers_ica_window(i));
        physical_free(entries[i] & PAGE_ADDRESS_MASK, 1);
        kernel_shared->table_frames--;
    }
    physical_free(root, 1);
}

long address_space_write(uint64_t root, uint64_t virtual_address, const void *bytes,
                         uint64_t length)
{
    const uint8_t *source = bytes;
    while (length > 0) {
        uint64_t physical = paging_translate(root, virtual_address);
        if (physical == 0)
            return -E_FAULT;
        uint64_t chunk = PAGE_SIZE - (virtual_address & (PAGE_SIZE - 1));
        if (chunk > length)
            chunk = length;
        memcpy(phys_to_virt(physical), source, chunk);
        source += chunk;
        virtual_address += chunk;
        length -= chunk;
    }
    return 0;
}
