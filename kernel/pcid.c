/* pcid.c: PCID on a core (CR4.PCIDE), when the boot's CPU decision uses it
 * (cpu_features.h: offered by CPUID.1:ECX.PCID and not turned off with `nopcid`). From
 * then on translations_load tags each process's root with its PCID (translation_stamp.h). */
#include "pcid.h"
#include "console.h"
#include "cpu_features.h"
#include "shared.h"
#include "x86.h"
#include <string.h>

#define CR4_PCIDE (1ull << 17)
#define CR3_PCID_BITS 0xfffull

void pcid_enable(struct cpu *cpu)
{
    cpu->pcid_on = 0;
    if (!cpu_feature_has(kernel_shared->cpu.used, CPU_FEATURE_PCID) ||
        cpu_features_missing_here(1u << CPU_FEATURE_PCID) != 0)
        return; /* a core without it is stopped by its start-up check */
    uint64_t cr3 = read_cr3();
    if ((read_cr4() & CR4_PCIDE) == 0 && (cr3 & CR3_PCID_BITS) != 0) {
        kprintf("pcid: core %u: CR3 0x%lx has bits 11:0 set, PCID stays off here\n", cpu->index,
                cr3);
        return; /* setting CR4.PCIDE would fault */
    }
    memset(cpu->pcid_loaded, 0, sizeof(cpu->pcid_loaded));
    write_cr4(read_cr4() | CR4_PCIDE);
    cpu->pcid_on = 1;
}
