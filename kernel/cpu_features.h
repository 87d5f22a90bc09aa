/* cpu_features.h: what the CPU offers (CPUID), what the command line turns
 * off, and so what the kernels use. The m-kernel decides once at boot and
 * keeps the outcome in kernel_shared->cpu; every core follows it, so no
 * optional instruction runs on a core whose CPUID did not offer it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

enum cpu_feature {
    CPU_FEATURE_XSAVE,         /* CPUID.1:ECX.XSAVE */
    CPU_FEATURE_AVX,           /* CPUID.1:ECX.AVX */
    CPU_FEATURE_X2APIC,        /* CPUID.1:ECX.x2APIC */
    CPU_FEATURE_TSC_DEADLINE,  /* CPUID.1:ECX.TSC-deadline */
    CPU_FEATURE_PCID,          /* CPUID.1:ECX.PCID */
    CPU_FEATURE_HYPERVISOR,    /* CPUID.1:ECX bit 31 */
    CPU_FEATURE_FSGSBASE,      /* CPUID.7.0:EBX.FSGSBASE */
    CPU_FEATURE_NX,            /* CPUID.80000001h:EDX.NX */
    CPU_FEATURE_PAGE_1G,       /* CPUID.80000001h:EDX.Page1GB */
    CPU_FEATURE_INVARIANT_TSC, /* CPUID.80000007h:EDX bit 8 */
    CPU_FEATURE_COUNT,
};

/* The CPUID leaves the decision reads; a leaf past the CPU's maximum is 0. */
struct cpuid_leaves {
    uint32_t leaf1[4];      /* eax, ebx, ecx, edx */
    uint32_t leaf7[4];      /* subleaf 0 */
    uint32_t xsave_avx[4];  /* 0xd subleaf 2: the AVX state's size (eax) and offset (ebx) */
    uint32_t extended1[4];  /* 0x80000001 */
    uint32_t extended7[4];  /* 0x80000007 */
    uint32_t hypervisor[4]; /* 0x40000000 when CPUID.1:ECX bit 31 is set */
};

struct cpu_features {
    uint32_t offered;    /* 1 << enum cpu_feature for each the CPU offers */
    uint32_t used;       /* the subset the kernels use */
    uint32_t disabled;   /* offered, but turned off on the command line */
    char hypervisor[13]; /* CPUID 40000000h's signature, "" on a bare CPU */
};

/* The command-line words that turn a feature off (Linux's spelling). */
#define CPU_OPTION_NO_XSAVE "noxsave"
#define CPU_OPTION_NO_X2APIC "nox2apic"
#define CPU_OPTION_NO_PCID "nopcid"

static inline bool cpu_feature_has(uint32_t set, enum cpu_feature feature)
{
    return (set >> feature) & 1;
}

/* Fills `leaves` on the calling core (the cpuid instruction). */
void cpuid_leaves_read(struct cpuid_leaves *leaves);
/* Pure: what `leaves` offer, and what is used once `disabled` (bits of
 * enum cpu_feature the command line turned off) is taken away. XSAVE is
 * used only with AVX, and only when the AVX state ends inside a process's
 * FPU area (fpu.h): that area is x87, SSE and AVX, or fxsave's. */
void cpu_features_decide(const struct cpuid_leaves *leaves, uint32_t disabled,
                         struct cpu_features *features);
/* Of `used`, what the calling core's own CPUID does not offer (0: none). */
uint32_t cpu_features_missing_here(uint32_t used);
/* "xsave", "avx", ... as the boot line and the @json line spell them. */
const char *cpu_feature_name(enum cpu_feature feature);
