/* fpu.c: enabling the user FPU state on a core (fpu.h): SSE always (CR0.MP
 * on, CR0.EM off, CR4.OSFXSR and OSXMMEXCPT), and XSAVE with AVX when CPUID
 * offers both and their XSAVE area fits a process's FPU_STATE_BYTES, so user
 * programs may use 256-bit registers (lib/string.c's memcpy does). */
#include "fpu.h"
#include "x86.h"

#define CR0_MP (1ull << 1)
#define CR0_EM (1ull << 2)
#define CR4_OSFXSR (1ull << 9)
#define CR4_OSXMMEXCPT (1ull << 10)
#define CR4_OSXSAVE (1ull << 18)
#define CPUID1_ECX_XSAVE (1u << 26)
#define CPUID1_ECX_AVX (1u << 28)

bool fpu_uses_xsave;

static uint64_t read_cr4(void)
{
    uint64_t cr4;
    __asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
    return cr4;
}

static void write_cr4(uint64_t cr4)
{
    __asm__ volatile("mov %0, %%cr4" : : "r"(cr4));
}

static void write_xcr0(uint64_t features)
{
    __asm__ volatile("xsetbv" : : "c"(0), "a"((uint32_t)features), "d"((uint32_t)(features >> 32)));
}

/* XSAVE with AVX switched on, if the core has them and the area fits. */
static bool enable_xsave(void)
{
    uint32_t regs[4];
    cpuid(1, 0, regs);
    if ((regs[2] & (CPUID1_ECX_XSAVE | CPUID1_ECX_AVX)) != (CPUID1_ECX_XSAVE | CPUID1_ECX_AVX))
        return false;
    write_cr4(read_cr4() | CR4_OSXSAVE);
    write_xcr0(FPU_XSAVE_FEATURES);
    cpuid(0xd, 0, regs); /* EBX: the area the features now enabled need */
    if (regs[1] <= FPU_STATE_BYTES)
        return true;
    write_xcr0(1); /* x87 only, then XSAVE off again: fxsave64 as before */
    write_cr4(read_cr4() & ~CR4_OSXSAVE);
    return false;
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
