/* memory_type.h: the memory type a physical range gets from the MTRRs
 * (Intel SDM vol. 3, 11.11: the default type, variable ranges, UC winning
 * over every other type and WT over WB) and the PAT entry a page-table
 * entry selects, decoded from the MSR values. Pure, host-tested; the
 * m-kernel reads the MSRs (persistent_memory.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

enum memory_type {
    MEMORY_UC = 0,
    MEMORY_WC = 1,
    MEMORY_WT = 4,
    MEMORY_WP = 5,
    MEMORY_WB = 6,
    MEMORY_UC_MINUS = 7,      /* PAT only */
    MEMORY_MIXED = 0x100,     /* a range whose parts have different types */
    MEMORY_UNDEFINED = 0x101, /* overlapping variable ranges the SDM leaves undefined */
};

#define MTRR_VARIABLE_MAX 32

/* The MTRR MSRs as read: IA32_MTRRCAP (0xfe), IA32_MTRR_DEF_TYPE (0x2ff),
 * IA32_MTRR_PHYSBASEn/PHYSMASKn (0x200 + 2n, 0x201 + 2n). */
struct mtrr_state {
    bool present;          /* CPUID.1:EDX.MTRR */
    uint64_t capabilities; /* VCNT in bits 7:0 */
    uint64_t default_type; /* type in bits 7:0, fixed ranges on (bit 10), enabled (bit 11) */
    uint64_t base[MTRR_VARIABLE_MAX], mask[MTRR_VARIABLE_MAX];
    uint32_t physical_bits; /* CPUID.80000008h:EAX[7:0] */
};

/* The MTRR type of [base, base + bytes), for ranges at or above 1 MiB (no
 * fixed ranges): one type, MEMORY_MIXED or MEMORY_UNDEFINED. Without MTRRs
 * the type is WB (nothing restricts the PAT's); with them disabled, UC. */
enum memory_type mtrr_range_type(const struct mtrr_state *mtrrs, uint64_t base, uint64_t bytes);
/* Entry `index` (0-7) of an IA32_PAT value. */
enum memory_type pat_entry(uint64_t pat, unsigned index);
/* "UC", "WC", "WT", "WP", "WB", "UC-", "mixed", "undefined", "?". */
const char *memory_type_name(enum memory_type type);
