/* paging.h: the kernel half of the page tables, built and changed only by
 * the m-kernel: the direct map of physical memory, the m-kernel image and
 * the p-kernel image. Every address space shares these upper-half entries. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define PAGE_PRESENT (1ull << 0)
#define PAGE_WRITABLE (1ull << 1)
#define PAGE_USER (1ull << 2)
#define PAGE_WRITE_THROUGH (1ull << 3)
/* PWT alone selects PAT entry 1, which page_attributes_program makes write-combining. */
#define PAGE_WRITE_COMBINING PAGE_WRITE_THROUGH
#define PAGE_CACHE_DISABLE (1ull << 4)
#define PAGE_ACCESSED (1ull << 5)
#define PAGE_DIRTY (1ull << 6)
#define PAGE_LARGE (1ull << 7)
#define PAGE_GLOBAL (1ull << 8)
#define PAGE_DEVICE (1ull << 9) /* software bit: device memory, never freed as a frame */
#define PAGE_ADDRESS_MASK 0x000ffffffffff000ull

/* Builds the final kernel page tables and switches the boot core to them. */
void paging_init(uint64_t usable_end);
/* Physical address of the kernel's top-level table (for CR3). */
uint64_t paging_kernel_root(void);
/* Maps one 4 KiB page under `root` (intermediate tables made as needed);
 * 0, or -1 when out of memory or a large page is in the way. */
int paging_map_page(uint64_t root, uint64_t virtual_address, uint64_t physical, uint64_t flags);
/* Makes every (user) table down to the last level exist for the range, with
 * no page mapped yet; false when out of memory. */
bool paging_prepare_tables(uint64_t root, uint64_t virtual_address, uint64_t bytes);
/* The last-level entry for `virtual_address`, or NULL when no table holds it. */
uint64_t *paging_find_entry(uint64_t root, uint64_t virtual_address);
/* Removes a 4 KiB mapping; returns the frame it mapped, or 0. */
uint64_t paging_unmap_page(uint64_t root, uint64_t virtual_address);
/* Physical address behind `virtual_address` under `root`, or 0 when unmapped. */
uint64_t paging_translate(uint64_t root, uint64_t virtual_address);
/* Maps one 4 KiB page in the kernel half; 0 on success, -1 when out of memory
 * or the address is already mapped by a large page. */
int paging_map_kernel_page(uint64_t virtual_address, uint64_t physical, uint64_t flags);
