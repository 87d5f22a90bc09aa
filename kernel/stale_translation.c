/* stale_translation.c: a page fault at a user address that the running process's tables,
 * walked now, allow: an entry made writable (or mapped) while the process was away, and a
 * TLB entry of the older one kept under its PCID, or kept by a resume without a CR3 write.
 * The fault itself dropped that entry (SDM 4.10.4.1); the access is retried, in user mode
 * or in the kernel's copy to a checked user buffer. */
#include "stale_translation.h"
#include "cpu.h"
#include "layout.h"
#include "process.h" /* USER_SPACE_START */
#include "user_memory.h"
#include "x86.h"

#define CR3_ROOT 0x000ffffffffff000ull
#define FAULT_WRITE (1ull << 1)
#define FAULT_RESERVED_BIT (1ull << 3)
#define FAULT_INSTRUCTION (1ull << 4)    /* a fetch: the walk below does not check NX */
#define FAULT_PROTECTION_KEY (1ull << 5) /* nor protection keys */
#define FAULT_NOT_RETRIED (FAULT_RESERVED_BIT | FAULT_INSTRUCTION | FAULT_PROTECTION_KEY)

bool stale_translation_fault(uint64_t address, uint64_t error_code)
{
    if (this_cpu()->current == NULL || (error_code & FAULT_NOT_RETRIED) != 0 ||
        address < USER_SPACE_START || address >= USER_SPACE_END)
        return false;
    uint64_t root = read_cr3() & CR3_ROOT; /* the tables the access walked, not a PCID */
    if (!user_page_ok(root, address, (error_code & FAULT_WRITE) != 0))
        return false;
    this_cpu()->stale_faults++;
    invlpg(address); /* the fault dropped it already: this only says so */
    return true;
}
