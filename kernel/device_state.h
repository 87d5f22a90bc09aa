/* device_state.h: what both kernels know about devices, in one record the
 * m-kernel allocates at boot (kernel_shared->devices): the IOAPICs, the ISA
 * overrides, who owns each interrupt line, and each process's device rights. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "process.h"
#include "spinlock.h"

#define DEVICE_MAX_IOAPICS 8
#define DEVICE_GSI_LIMIT 128    /* GSIs 0..127 can be routed */
#define DEVICE_VECTOR_BASE 0x40 /* GSI g arrives on vector 0x40 + g (0x40..0xbf) */
#define DEVICE_MSI_SLOTS                                                                           \
    32 /* MSI slot s: line DEVICE_GSI_LIMIT + s, vector 0xc0 + s (kernel/msi.c) */
#define DEVICE_LINES (DEVICE_GSI_LIMIT + DEVICE_MSI_SLOTS)
#define DEVICE_WINDOW_BASE 0x0000600000000000ull /* device maps and DMA go here */
#define DEVICE_WINDOW_END 0x0000700000000000ull
#define DEVICE_NO_GSI (-1)
_Static_assert(DEVICE_VECTOR_BASE + DEVICE_GSI_LIMIT <= 0xc0,
               "device vectors stay below the timer, message and spurious vectors");

/* MADT interrupt source override flags (ACPI MPS INTI flags). */
#define OVERRIDE_POLARITY_MASK 3u
#define OVERRIDE_POLARITY_LOW 3u
#define OVERRIDE_TRIGGER_MASK (3u << 2)
#define OVERRIDE_TRIGGER_LEVEL (3u << 2)

struct ioapic_record {
    uint32_t id;
    uint32_t gsi_base;
    uint32_t pins;
    volatile uint32_t *registers; /* IOREGSEL at [0], IOWIN at [4] (direct map) */
};

struct isa_override {
    uint32_t present;
    uint32_t gsi;
    uint32_t flags;
};

/* One routable interrupt line; owner_pid 0 = free. */
struct irq_line {
    _Atomic uint32_t owner_pid;
    uint32_t core;
    uint32_t level; /* level-triggered: masked from delivery until SYS_IRQ_WAIT */
    _Atomic uint32_t pending;
    _Atomic uint32_t ends_ica_wait; /* the owner waits in ica_receive with ICA_OR_IRQ */
};

#define DEVICE_PERSISTENT_MAPS 4 /* persistent-memory mappings a driver's record keeps */

/* A process's device rights and device memory, indexed by slot (pid % PROCESS_SLOTS). */
struct device_process {
    uint32_t pid;   /* the record is valid only while this matches */
    uint32_t flags; /* SPAWN_* given at spawn */
    int32_t gsi;    /* the line it owns (an MSI slot's is >= DEVICE_GSI_LIMIT), or DEVICE_NO_GSI */
    uint64_t window_next; /* next free address in its device window (m-kernel only) */
    uint64_t dma_bytes;   /* DMA memory it holds (m-kernel only) */
    /* The persistent memory it has mapped (m-kernel only): the pages
     * SYS_ICA_DEVICE_BLOCK may make block ICAs of. */
    uint32_t persistent_count;
    uint64_t persistent_base[DEVICE_PERSISTENT_MAPS];
    uint64_t persistent_end[DEVICE_PERSISTENT_MAPS];
};

struct device_state {
    struct spinlock pci_lock;    /* ports 0xcf8/0xcfc are one global index/data pair */
    struct spinlock ioapic_lock; /* IOREGSEL/IOWIN likewise */
    uint32_t ioapic_count;
    struct ioapic_record ioapics[DEVICE_MAX_IOAPICS];
    struct isa_override isa[16];
    struct spinlock msi_lock; /* claiming an MSI slot and its PCI function */
    struct irq_line lines[DEVICE_LINES];
    uint32_t msi_function[DEVICE_MSI_SLOTS]; /* (bus << 8 | device << 3 | function) + 1 */
    struct device_process processes[PROCESS_SLOTS];
};

/* The record of `process`, or NULL when the table is missing or stale. */
struct device_process *device_process_of(const struct process *process);
/* True when `process` was spawned with SPAWN_DRIVER. */
bool device_is_driver(const struct process *process);
