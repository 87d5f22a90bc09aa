/* page_attributes.c: the PAT with a write-combining entry (page_attributes.h). */
#include "page_attributes.h"
#include "shared.h"
#include "x86.h"

#define MSR_PAT 0x277
#define CPUID_1_EDX_PAT (1u << 16)
/* Power-on: WB, WT, UC-, UC, WB, WT, UC-, UC (entry i in byte i); entry 1 WT -> WC (1). */
#define PAT_POWER_ON 0x0007040600070406ull
#define PAT_ENTRY_1_MASK (0xffull << 8)
#define PAT_TYPE_WRITE_COMBINING 0x01ull

bool page_attributes_offered(void)
{
    uint32_t regs[4];
    cpuid(1, 0, regs);
    return (regs[3] & CPUID_1_EDX_PAT) != 0;
}

void page_attributes_program(void)
{
    if (!kernel_shared->write_combining)
        return;
    wrmsr(MSR_PAT, (PAT_POWER_ON & ~PAT_ENTRY_1_MASK) | PAT_TYPE_WRITE_COMBINING << 8);
}
