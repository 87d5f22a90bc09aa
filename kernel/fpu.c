/* fpu.c: enabling the user FPU state on a core (fpu.h): SSE always (CR0.MP
 * on, CR0.EM off, CR4.OSFXSR and OSXMMEXCPT), and XSAVE with AVX when the
 * boot's CPU decision uses them (cpu_features.h), so user programs may use
 * 256-bit registers (lib/string.c's memcpy does, when the kernel says so). */
#include "fpu.h"
#include "cpu_features.h"
#include "shared.h"
#include "x86.h"

#define CR0_MP (1ull << 1)
#define CR0_EM (1ull << 2)
#define CR4_OSFXSR (1ull << 9)
#define CR4_OSXMMEXCPT (1ull << 10)
#define CR4_OSXSAVE (1ull << 18)

bool fpu_uses_xsave;

static void write_xcr0(uint64_t features)
{
    __asm__ volatile("xsetbv" : : "c"(0), "a"((uint32_t)features), "d"((uint32_t)(features >> 32)));
}

/* XSAVE with x87, SSE and AVX: only when the boot decision (cpu_features.h,
 * kernel_shared->cpu) says the CPU offers it and the command line left it on. */
static bool enable_xsave(void)
{
    if (!cpu_feature_has(kernel_shared->cpu.used, CPU_FEATURE_XSAVE) ||
        cpu_features_missing_here(1u << CPU_FEATURE_XSAVE) != 0)
        return false; /* a core without it is stopped by its start-up check */
    write_cr4(read_cr4() | CR4_OSXSAVE);
    write_xcr0(FPU_XSAVE_FEATURES);
    return true;
}

void fpu_enable(void)
{
    uint64_t cr0;
    __asm__ volatile("mov %%cr0, %0" : "=r"(cr0));
    cr0 = (cr0 | CR0_MP) & ~CR0_EM;
    __asm__ volatile("mov %0, %%cr0" : : "r"(cr0));
    write_cr4(read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
    fpu_uses_xsave = enable_xsave();
    __asm__ volatile("fninit");
}
