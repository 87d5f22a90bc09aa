/* madt.h: parsing the ACPI MADT ("APIC" table): the cores (xAPIC and x2APIC
 * entries), the IOAPICs and the LAPIC address. Malformed tables give an
 * error code, never a crash. Pure logic, tested on the host. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define MADT_MAX_CORES 256 /* FORMICA_MAX_CORES */
#define MADT_MAX_IOAPICS 8
#define MADT_MAX_OVERRIDES 16

enum madt_error {
    MADT_OK = 0,
    MADT_ERROR_TOO_SHORT = -1, /* shorter than the fixed header */
    MADT_ERROR_SIGNATURE = -2, /* not "APIC" */
    MADT_ERROR_LENGTH = -3,    /* header length beyond what is readable */
    MADT_ERROR_CHECKSUM = -4,  /* bytes do not sum to zero */
    MADT_ERROR_ENTRY = -5,     /* an entry with a length of 0, too short, or past the end */
    MADT_ERROR_NO_CORES = -6,  /* no enabled processor at all */
};

struct madt_core {
    uint32_t apic_id;
    uint32_t processor_uid;
};

struct madt_ioapic {
    uint32_t id;
    uint32_t address;
    uint32_t interrupt_base;
};

/* Interrupt source override (type 2): ISA IRQ `source` arrives on `gsi`
 * with `flags` (bits 0-1 polarity, 2-3 trigger mode; 0 = bus default). */
struct madt_override {
    uint8_t source;
    uint32_t gsi;
    uint16_t flags;
};

struct madt_info {
    uint64_t lapic_address;
    uint32_t core_count;
    struct madt_core cores[MADT_MAX_CORES];
    uint32_t cores_ignored;  /* enabled cores beyond MADT_MAX_CORES */
    uint32_t cores_disabled; /* entries neither enabled nor online-capable */
    uint32_t ioapic_count;
    struct madt_ioapic ioapics[MADT_MAX_IOAPICS];
    int legacy_pics; /* PCAT_COMPAT: 8259s present and must be masked */
    uint32_t override_count;
    struct madt_override overrides[MADT_MAX_OVERRIDES];
};

/* Parses `table` of which `available` bytes may be read. */
int madt_parse(const void *table, size_t available, struct madt_info *info);
const char *madt_error_text(int error);
/* Moves the core with `apic_id` to index 0 (the boot core); -1 if absent. */
int madt_put_boot_core_first(struct madt_info *info, uint32_t apic_id);
