/* shared.h: the state both kernels see. The m-kernel fills one kernel_shared
 * record at boot and hands its address to every p-kernel core in the AP
 * start-up hand-off; a kernel image's own static data is never shared. */
#pragma once
#include "cpu_features.h"
#include <stdbool.h>
#include <stdint.h>
#include "console.h"
#include "cpu.h"
#include <formica/syscalls.h>

#define MAX_CORES FORMICA_MAX_CORES
/* The m-kernel's core: the boot core, kernel_shared->cpus[MKERNEL_CORE].
 * Every other core runs a p-kernel. */
#define MKERNEL_CORE 0u
/* The p-kernel cores are FIRST_PKERNEL_CORE .. core_count - 1. */
#define FIRST_PKERNEL_CORE (MKERNEL_CORE + 1)
_Static_assert(MKERNEL_CORE == 0, "madt_put_boot_core_first makes the boot core record 0; "
                                  "the p-kernel cores follow it");
#define KERNEL_SHARED_MAGIC 0x466f726d /* "Form" */
#define COMMAND_LINE_BYTES 4096

struct intercore_area;
struct process;
struct device_state;
struct ica_pools;
struct mapping_lend;

/* Filled by the m-kernel at boot and read-only afterwards, except the
 * _Atomic counters (every core), the console (under its lock) and what the
 * pointed-to tables say about their own fields. */
#define PROCESS_SLOTS 256 /* kernel_shared->processes (process.h) */

struct kernel_shared {
    uint32_t magic;
    uint32_t core_count;
    struct cpu *cpus; /* core_count records */
    struct intercore_area *intercore;
    struct console_state console;
    uint64_t tsc_hz;              /* TSC ticks per second */
    uint64_t lapic_ticks_per_ms;  /* LAPIC timer ticks per millisecond (divide by 16) */
    const char *tsc_source;       /* how tsc_hz was found */
    volatile uint8_t *lapic_mmio; /* xAPIC registers, unused in x2APIC mode */
    bool x2apic;
    bool write_combining;    /* every core's PAT entry 1 is write-combining (page_attributes.h) */
    struct cpu_features cpu; /* what CPUID offers and the kernels use (cpu_features.h) */
    _Atomic uint32_t cores_online; /* each core adds itself once */
    _Atomic uint32_t panicking;    /* 1 + the core that panicked: others stop printing */
    uint64_t kernel_root;          /* page-table root with only the kernel half */
    uint64_t translation_stamp;    /* bumped by a freed address space (translation_stamp.h) */
    struct process *processes;     /* PROCESS_SLOTS entries */
    /* Each slot's quota account while its process lives (set before it is
     * ready, 0 once the slot is freed): written by the m-kernel, read by any
     * core that sums an account (account_memory.c) without reading the
     * other slots' records. */
    _Atomic uint32_t slot_accounts[PROCESS_SLOTS];
    struct ica_pools *icas;             /* ICA descriptors and registered servers */
    struct mapping_lend *mapping_lends; /* MAPPING_LENDS entries (kernel/ica/mapping_lend.h) */
    struct placement_info placement;
    uint32_t tick_period_ms;
    bool profile_marks;           /* the command line's `profile`: switches call profile_pads */
    struct device_state *devices; /* IOAPICs, interrupt owners, device rights (device_state.h) */
    /* Frames the m-kernel's allocator holds free (written by it alone after
     * every change) and had free when it started: SYS_ICA_STATS reports them. */
    _Atomic uint64_t frames_free;
    uint64_t frames_total;
    /* Of the frames in use: page tables (below a root, created on demand:
     * a server's tables for ICA windows it has seen stay while it lives)
     * and server request rings (kept for good per server slot). */
    uint64_t table_frames;
    uint64_t ring_frames;
    char command_line[COMMAND_LINE_BYTES];
};

/* Each image defines this pointer; the p-kernel sets it from the hand-off. */
extern struct kernel_shared *kernel_shared;

/* Value of option `name` in the command line ("name=value" or bare "name",
 * which yields ""), copied into `value`; false when absent. */
bool command_line_option(const char *name, char *value, unsigned value_size);
/* Where option `name`'s value starts in the command line, and its length. */
bool command_line_find(const char *name, const char **value, unsigned *length);
/* The decimal number at the start of `text` (digits only), else `fallback`. */
uint64_t command_line_parse_number(const char *text, uint64_t fallback);
/* Option `name` as a decimal number; `fallback` when absent or not a number. */
uint64_t command_line_number(const char *name, uint64_t fallback);
