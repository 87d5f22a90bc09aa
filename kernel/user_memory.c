/* user_memory.c: walks the page tables (read only, through the direct map)
 * to check user pointers. The p-kernel may read page tables; only the
 * m-kernel builds or changes them. */
#include "user_memory.h"
#include "cpu.h"
#include "layout.h"
#include "file_region.h"
#include "pager_syscalls.h"
#include "process.h"
#include <formica/errors.h>
#include <string.h>

#define ENTRY_PRESENT 1ull
#define ENTRY_WRITABLE 2ull
#define ENTRY_USER 4ull
#define ENTRY_LARGE 0x80ull
#define ENTRY_ADDRESS 0x000ffffffffff000ull

bool user_page_ok(uint64_t root, uint64_t address, bool write)
{
    const uint64_t *table = phys_to_virt(root);
    for (int level = 3; level >= 0; level--) {
        uint64_t entry = table[(address >> (12 + 9 * level)) & 511];
        if (!(entry & ENTRY_PRESENT) || !(entry & ENTRY_USER))
            return false;
        if (write && !(entry & ENTRY_WRITABLE))
            return false;
        if (level == 0 || (entry & ENTRY_LARGE))
            return true;
        table = phys_to_virt(entry & ENTRY_ADDRESS);
    }
    return false;
}

#define PAGE_IN_PASSES 4

enum page_check { PAGE_READY, PAGE_PAGED_IN, PAGE_BAD };

/* A page of the running process's pager region that is not resident is
 * brought in by the pager, as a fault from user mode would be; a page of
 * one of its file regions (mmap) by FS and BLK. */
static enum page_check check_page(uint64_t root, uint64_t page, bool write)
{
    if (user_page_ok(root, page, write))
        return PAGE_READY;
    struct process *process = this_cpu()->current;
    if (process == NULL || process->root != root)
        return PAGE_BAD;
    if (process->pager != 0 && pager_resolve_fault(page, write ? 2 : 0))
        return PAGE_PAGED_IN;
    if (process->file_region_control != 0 &&
        file_region_bring_in(page, write, write && user_page_ok(root, page, false)))
        return PAGE_PAGED_IN;
    return PAGE_BAD;
}

bool user_range_ok(uint64_t root, uint64_t address, uint64_t length, bool write)
{
    if (length == 0)
        return true;
    uint64_t end = address + length;
    if (end < address || address < USER_SPACE_START || end > USER_SPACE_END)
        return false;
    /* Paging a page in may evict one checked before it: the range counts as
     * ready only after a pass that paged nothing in (then nothing can change
     * it before the kernel touches it). A range larger than the process's
     * local memory never gets there and is refused. */
    for (int pass = 0; pass < PAGE_IN_PASSES; pass++) {
        bool paged = false;
        for (uint64_t page = address & ~0xfffull; page < end; page += 4096) {
            enum page_check check = check_page(root, page, write);
            if (check == PAGE_BAD)
                return false;
            paged |= check == PAGE_PAGED_IN;
        }
        if (!paged)
            return true;
    }
    return false;
}

static uint64_t current_root(void)
{
    return this_cpu()->current->root;
}

long copy_from_user(void *destination, uint64_t source, size_t length)
{
    if (!user_range_ok(current_root(), source, length, false))
        return -E_FAULT;
    memcpy(destination, (const void *)source, length);
    return 0;
}

long copy_to_user(uint64_t destination, const void *source, size_t length)
{
    if (!user_range_ok(current_root(), destination, length, true))
        return -E_FAULT;
    memcpy((void *)destination, source, length);
    return 0;
}

long copy_string_from_user(char *destination, uint64_t source, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if ((i == 0 || ((source + i) & 0xfff) == 0) &&
            !user_range_ok(current_root(), source + i, 1, false))
            return -E_FAULT;
        destination[i] = ((const char *)source)[i];
        if (destination[i] == '\0')
            return (long)i;
    }
    return -E_TOO_BIG;
}
