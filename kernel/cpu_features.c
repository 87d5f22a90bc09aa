/* cpu_features.c: CPUID's answers turned into the features the kernels use
 * (cpu_features.h). Reading is one cpuid per leaf; the decision is pure, so
 * the host unit test gives it any CPU's leaves. */
#include "cpu_features.h"
#include "fpu.h"
#include <string.h>

#define CPUID_EAX 0
#define CPUID_EBX 1
#define CPUID_ECX 2
#define CPUID_EDX 3

#define LEAF1_ECX_PCID (1u << 17)
#define LEAF1_ECX_X2APIC (1u << 21)
#define LEAF1_ECX_TSC_DEADLINE (1u << 24)
#define LEAF1_ECX_XSAVE (1u << 26)
#define LEAF1_ECX_AVX (1u << 28)
#define LEAF1_ECX_HYPERVISOR (1u << 31)
#define LEAF7_EBX_FSGSBASE (1u << 0)
#define EXTENDED1_EDX_NX (1u << 20)
#define EXTENDED1_EDX_PAGE_1G (1u << 26)
#define EXTENDED7_EDX_INVARIANT_TSC (1u << 8)

static const char *const feature_names[CPU_FEATURE_COUNT] = {
    [CPU_FEATURE_XSAVE] = "xsave",       [CPU_FEATURE_AVX] = "avx",
    [CPU_FEATURE_X2APIC] = "x2apic",     [CPU_FEATURE_TSC_DEADLINE] = "tsc-deadline",
    [CPU_FEATURE_PCID] = "pcid",         [CPU_FEATURE_HYPERVISOR] = "hypervisor",
    [CPU_FEATURE_FSGSBASE] = "fsgsbase", [CPU_FEATURE_NX] = "nx",
    [CPU_FEATURE_PAGE_1G] = "1g-pages",  [CPU_FEATURE_INVARIANT_TSC] = "invariant-tsc",
};

const char *cpu_feature_name(enum cpu_feature feature)
{
    return feature < CPU_FEATURE_COUNT ? feature_names[feature] : "?";
}

#ifdef FORMICA_KERNEL
#include "x86.h"

static void leaf_if_present(uint32_t leaf, uint32_t maximum, uint32_t regs[4])
{
    if (leaf <= maximum)
        cpuid(leaf, 0, regs);
    else
        memset(regs, 0, 4 * sizeof(uint32_t));
}

void cpuid_leaves_read(struct cpuid_leaves *leaves)
{
    uint32_t regs[4];
    cpuid(0, 0, regs);
    uint32_t basic_maximum = regs[CPUID_EAX];
    cpuid(0x80000000u, 0, regs);
    uint32_t extended_maximum = regs[CPUID_EAX];
    leaf_if_present(1, basic_maximum, leaves->leaf1);
    leaf_if_present(7, basic_maximum, leaves->leaf7);
    if (basic_maximum >= 0xd)
        cpuid(0xd, 2, leaves->xsave_avx);
    else
        memset(leaves->xsave_avx, 0, sizeof(leaves->xsave_avx));
    leaf_if_present(0x80000001u, extended_maximum, leaves->extended1);
    leaf_if_present(0x80000007u, extended_maximum, leaves->extended7);
    memset(leaves->hypervisor, 0, sizeof(leaves->hypervisor));
    if (leaves->leaf1[CPUID_ECX] & LEAF1_ECX_HYPERVISOR)
        cpuid(0x40000000u, 0, leaves->hypervisor);
}

uint32_t cpu_features_missing_here(uint32_t used)
{
    struct cpuid_leaves leaves;
    struct cpu_features here;
    cpuid_leaves_read(&leaves);
    cpu_features_decide(&leaves, 0, &here);
    return used & ~here.offered;
}
#endif

static uint32_t bit_if(bool condition, enum cpu_feature feature)
{
    return condition ? 1u << feature : 0;
}

static uint32_t features_offered(const struct cpuid_leaves *leaves)
{
    uint32_t ecx1 = leaves->leaf1[CPUID_ECX];
    uint32_t edx_extended = leaves->extended1[CPUID_EDX];
    return bit_if(ecx1 & LEAF1_ECX_XSAVE, CPU_FEATURE_XSAVE) |
           bit_if(ecx1 & LEAF1_ECX_AVX, CPU_FEATURE_AVX) |
           bit_if(ecx1 & LEAF1_ECX_X2APIC, CPU_FEATURE_X2APIC) |
           bit_if(ecx1 & LEAF1_ECX_TSC_DEADLINE, CPU_FEATURE_TSC_DEADLINE) |
           bit_if(ecx1 & LEAF1_ECX_PCID, CPU_FEATURE_PCID) |
           bit_if(ecx1 & LEAF1_ECX_HYPERVISOR, CPU_FEATURE_HYPERVISOR) |
           bit_if(leaves->leaf7[CPUID_EBX] & LEAF7_EBX_FSGSBASE, CPU_FEATURE_FSGSBASE) |
           bit_if(edx_extended & EXTENDED1_EDX_NX, CPU_FEATURE_NX) |
           bit_if(edx_extended & EXTENDED1_EDX_PAGE_1G, CPU_FEATURE_PAGE_1G) |
           bit_if(leaves->extended7[CPUID_EDX] & EXTENDED7_EDX_INVARIANT_TSC,
                  CPU_FEATURE_INVARIANT_TSC);
}

/* The kernels use XSAVE (and so AVX in user programs), x2APIC and PCID (tagged address
 * spaces, kernel/pcid.c) when offered and not turned off; the other features are reported,
 * not used. */
static uint32_t features_used(const struct cpuid_leaves *leaves, uint32_t available)
{
    uint32_t used = available & (1u << CPU_FEATURE_X2APIC | 1u << CPU_FEATURE_INVARIANT_TSC |
                                 1u << CPU_FEATURE_PCID);
    uint32_t vector_state = 1u << CPU_FEATURE_XSAVE | 1u << CPU_FEATURE_AVX;
    uint64_t avx_end = (uint64_t)leaves->xsave_avx[CPUID_EAX] + leaves->xsave_avx[CPUID_EBX];
    if ((available & vector_state) == vector_state && avx_end <= FPU_STATE_BYTES &&
        leaves->xsave_avx[CPUID_EAX] != 0)
        used |= vector_state;
    return used;
}

static void hypervisor_signature(const struct cpuid_leaves *leaves, char name[13])
{
    memcpy(name, &leaves->hypervisor[CPUID_EBX], 4);
    memcpy(name + 4, &leaves->hypervisor[CPUID_ECX], 4);
    memcpy(name + 8, &leaves->hypervisor[CPUID_EDX], 4);
    name[12] = '\0';
    for (int i = 0; i < 12; i++)
        if (name[i] != '\0' && (name[i] < ' ' || name[i] > '~'))
            name[i] = '?'; /* the signature goes into a JSON string */
}

void cpu_features_decide(const struct cpuid_leaves *leaves, uint32_t disabled,
                         struct cpu_features *features)
{
    features->offered = features_offered(leaves);
    /* XSAVE off takes AVX with it: its registers would not be saved. */
    if (cpu_feature_has(disabled, CPU_FEATURE_XSAVE))
        disabled |= 1u << CPU_FEATURE_AVX;
    features->disabled = disabled & features->offered;
    features->used = features_used(leaves, features->offered & ~disabled);
    hypervisor_signature(leaves, features->hypervisor);
}
