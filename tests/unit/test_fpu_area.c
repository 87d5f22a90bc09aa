/* test_fpu_area.c: the FPU area of a new process (kernel/fpu_area.h) and
 * its place in the process record (kernel/process.h) against the Intel SDM's
 * conditions under which fxrstor and xrstor fault (vol. 1, 10.5.1 and
 * 13.8.1), and the CPU feature decision (kernel/cpu_features.c) that picks
 * which of the two the kernels use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cpu_features.h"
#include "fpu_area.h"
#include "process.h"

#define XCR0_X87_SSE_AVX 0x7ull
#define MXCSR_RESERVED 0xffff0000u /* above MXCSR_MASK's 16 bits: #GP when loaded */

static uint64_t load64(const uint8_t *at)
{
    uint64_t value;
    memcpy(&value, at, sizeof(value));
    return value;
}

static uint32_t load32(const uint8_t *at)
{
    uint32_t value;
    memcpy(&value, at, sizeof(value));
    return value;
}

/* SDM 13.8.1, the standard form of XRSTOR (XCOMP_BV[63] = 0) raises #GP when
 * the area is not 64-byte aligned, when XSTATE_BV sets a bit XCR0 does not,
 * when bytes 23:8 of the header are not all 0, or when it loads MXCSR (RFBM
 * has SSE or AVX) with a reserved bit set. */
static const char *xrstor_fault(const uint8_t *area, uint64_t xcr0, uint64_t instruction_mask)
{
    const uint8_t *header = area + FPU_AREA_XSAVE_HEADER;
    uint64_t requested = xcr0 & instruction_mask;
    if ((uintptr_t)area % 64 != 0)
        return "area not 64-byte aligned";
    if (load64(header + 8) >> 63)
        return "compacted form (XCOMP_BV[63] set)";
    if (load64(header) & ~xcr0)
        return "XSTATE_BV has a component XCR0 does not enable";
    for (int byte = 8; byte < 24; byte++)
        if (header[byte] != 0)
            return "header bytes 23:8 not zero";
    if ((requested & 0x6) && (load32(area + FPU_AREA_MXCSR) & MXCSR_RESERVED))
        return "MXCSR reserved bit set";
    return NULL;
}

/* SDM 10.5.1: FXRSTOR faults on an area not 16-byte aligned, or on MXCSR
 * with a reserved bit set. */
static const char *fxrstor_fault(const uint8_t *area)
{
    if ((uintptr_t)area % 16 != 0)
        return "area not 16-byte aligned";
    if (load32(area + FPU_AREA_MXCSR) & MXCSR_RESERVED)
        return "MXCSR reserved bit set";
    return NULL;
}

static void test_new_area_restores_under_both(void **state)
{
    (void)state;
    static struct process processes[3];
    for (int i = 0; i < 3; i++) {
        memset(processes[i].fpu_state, 0xa5, FPU_STATE_BYTES); /* a slot's earlier life */
        fpu_area_prepare(processes[i].fpu_state);
        assert_null(xrstor_fault(processes[i].fpu_state, XCR0_X87_SSE_AVX, FPU_XSAVE_FEATURES));
        assert_null(xrstor_fault(processes[i].fpu_state, 0x3, FPU_XSAVE_FEATURES));
        assert_null(fxrstor_fault(processes[i].fpu_state));
        assert_int_equal(load32(processes[i].fpu_state + FPU_AREA_MXCSR), 0x1f80);
        assert_int_equal(processes[i].fpu_state[0] | processes[i].fpu_state[1] << 8, 0x037f);
    }
}

/* The rules themselves: each violation is caught, so the test above can fail. */
static void test_rules_catch_each_violation(void **state)
{
    (void)state;
    static struct process process;
    uint8_t *area = process.fpu_state;
    fpu_area_prepare(area);
    area[FPU_AREA_XSAVE_HEADER] = 0x8; /* XSTATE_BV: MPX's BNDREGS */
    assert_non_null(xrstor_fault(area, XCR0_X87_SSE_AVX, FPU_XSAVE_FEATURES));
    fpu_area_prepare(area);
    area[FPU_AREA_XSAVE_HEADER + 15] = 0x80; /* XCOMP_BV[63] */
    assert_non_null(xrstor_fault(area, XCR0_X87_SSE_AVX, FPU_XSAVE_FEATURES));
    fpu_area_prepare(area);
    area[FPU_AREA_XSAVE_HEADER + 20] = 1; /* reserved header byte */
    assert_non_null(xrstor_fault(area, XCR0_X87_SSE_AVX, FPU_XSAVE_FEATURES));
    fpu_area_prepare(area);
    area[FPU_AREA_MXCSR + 2] = 1;
    assert_non_null(xrstor_fault(area, XCR0_X87_SSE_AVX, FPU_XSAVE_FEATURES));
    assert_non_null(fxrstor_fault(area));
    assert_null(xrstor_fault(area, XCR0_X87_SSE_AVX, 0x1)); /* x87 only: MXCSR not loaded */
    fpu_area_prepare(area);
    assert_non_null(xrstor_fault(area + 16, XCR0_X87_SSE_AVX, FPU_XSAVE_FEATURES));
    assert_non_null(fxrstor_fault(area + 8));
}

/* Every slot of the process table keeps the area 64-byte aligned. */
static void test_every_slot_aligned(void **state)
{
    (void)state;
    static struct process table[PROCESS_SLOTS];
    for (int i = 0; i < PROCESS_SLOTS; i++)
        assert_int_equal((uintptr_t)table[i].fpu_state % FPU_STATE_ALIGN, 0);
    assert_true(FPU_STATE_BYTES >= 832); /* legacy 512 + header 64 + AVX 256 */
}

/* A CPU offering XSAVE and AVX with the AVX state at the standard offset. */
static struct cpuid_leaves modern_cpu(void)
{
    struct cpuid_leaves leaves = {0};
    leaves.leaf1[2] = 1u << 26 | 1u << 28 | 1u << 21 | 1u << 31; /* xsave avx x2apic hypervisor */
    leaves.xsave_avx[0] = 256;                                   /* AVX: 256 bytes */
    leaves.xsave_avx[1] = 576;                                   /* at offset 576 */
    leaves.extended7[3] = 1u << 8;
    memcpy(&leaves.hypervisor[1], "KVMK", 4);
    memcpy(&leaves.hypervisor[2], "VMKV", 4);
    memcpy(&leaves.hypervisor[3], "M\0\0\0", 4);
    return leaves;
}

static bool uses(const struct cpu_features *features, enum cpu_feature feature)
{
    return cpu_feature_has(features->used, feature);
}

static void test_features_xsave_with_avx(void **state)
{
    (void)state;
    struct cpuid_leaves leaves = modern_cpu();
    struct cpu_features features;
    cpu_features_decide(&leaves, 0, &features);
    assert_true(uses(&features, CPU_FEATURE_XSAVE) && uses(&features, CPU_FEATURE_AVX));
    assert_true(uses(&features, CPU_FEATURE_X2APIC));
    assert_true(cpu_feature_has(features.offered, CPU_FEATURE_HYPERVISOR));
    assert_string_equal(features.hypervisor, "KVMKVMKVM");
    assert_int_equal(features.disabled, 0);
}

static void test_features_noxsave_takes_avx(void **state)
{
    (void)state;
    struct cpuid_leaves leaves = modern_cpu();
    struct cpu_features features;
    cpu_features_decide(&leaves, 1u << CPU_FEATURE_XSAVE | 1u << CPU_FEATURE_X2APIC, &features);
    assert_false(uses(&features, CPU_FEATURE_XSAVE) || uses(&features, CPU_FEATURE_AVX));
    assert_false(uses(&features, CPU_FEATURE_X2APIC));
    assert_true(cpu_feature_has(features.disabled, CPU_FEATURE_AVX));
    assert_true(cpu_feature_has(features.offered, CPU_FEATURE_XSAVE));
}

/* XSAVE without AVX, or an AVX state past the process's area: fxsave. */
static void test_features_need_both_and_room(void **state)
{
    (void)state;
    struct cpuid_leaves leaves = modern_cpu();
    struct cpu_features features;
    leaves.leaf1[2] &= ~(1u << 28);
    cpu_features_decide(&leaves, 0, &features);
    assert_false(uses(&features, CPU_FEATURE_XSAVE));
    leaves = modern_cpu();
    leaves.xsave_avx[1] = FPU_STATE_BYTES - 128;
    cpu_features_decide(&leaves, 0, &features);
    assert_false(uses(&features, CPU_FEATURE_XSAVE));
    leaves = modern_cpu();
    leaves.xsave_avx[0] = 0; /* no size: leaf 0xd absent */
    cpu_features_decide(&leaves, 0, &features);
    assert_false(uses(&features, CPU_FEATURE_XSAVE));
}

/* PCID is used when CPUID offers it, unless `nopcid` turned it off. */
static void test_features_pcid_used_unless_off(void **state)
{
    (void)state;
    struct cpuid_leaves leaves = modern_cpu();
    struct cpu_features features;
    cpu_features_decide(&leaves, 0, &features);
    assert_false(uses(&features, CPU_FEATURE_PCID));
    leaves.leaf1[2] |= 1u << 17;
    cpu_features_decide(&leaves, 0, &features);
    assert_true(uses(&features, CPU_FEATURE_PCID));
    cpu_features_decide(&leaves, 1u << CPU_FEATURE_PCID, &features);
    assert_false(uses(&features, CPU_FEATURE_PCID));
    assert_true(cpu_feature_has(features.disabled, CPU_FEATURE_PCID));
}

static void test_features_bare_old_cpu(void **state)
{
    (void)state;
    struct cpuid_leaves leaves = {0};
    struct cpu_features features;
    cpu_features_decide(&leaves, 1u << CPU_FEATURE_XSAVE, &features);
    assert_int_equal(features.offered, 0);
    assert_int_equal(features.used, 0);
    assert_int_equal(features.disabled, 0); /* nothing to turn off */
    assert_string_equal(features.hypervisor, "");
    leaves.hypervisor[1] = 0x0a0d4b4b; /* control characters become '?' */
    cpu_features_decide(&leaves, 0, &features);
    assert_string_equal(features.hypervisor, "KK??");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_area_restores_under_both),
        cmocka_unit_test(test_rules_catch_each_violation),
        cmocka_unit_test(test_every_slot_aligned),
        cmocka_unit_test(test_features_xsave_with_avx),
        cmocka_unit_test(test_features_noxsave_takes_avx),
        cmocka_unit_test(test_features_need_both_and_room),
        cmocka_unit_test(test_features_pcid_used_unless_off),
        cmocka_unit_test(test_features_bare_old_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
