/* madt.c: walks the MADT's variable-length entries, checking every length
 * against the table before reading, and collects enabled cores (types 0 and
 * 9, skipping duplicates), IOAPICs (type 1), interrupt source overrides
 * (type 2) and a LAPIC override (type 5). */
#include "madt.h"
#include "acpi_tables.h"
#include <string.h>

#define ENTRY_LAPIC 0
#define ENTRY_IOAPIC 1
#define ENTRY_SOURCE_OVERRIDE 2
#define ENTRY_LAPIC_OVERRIDE 5
#define ENTRY_X2APIC 9
#define FLAG_ENABLED 1u
#define FLAG_ONLINE_CAPABLE 2u
#define MADT_FIXED_BYTES (sizeof(struct acpi_header) + 8)

static uint32_t read32(const uint8_t *bytes)
{
    uint32_t value;
    memcpy(&value, bytes, 4);
    return value;
}

static uint64_t read64(const uint8_t *bytes)
{
    uint64_t value;
    memcpy(&value, bytes, 8);
    return value;
}

static void add_core(struct madt_info *info, uint32_t apic_id, uint32_t uid, uint32_t flags)
{
    if ((flags & FLAG_ENABLED) == 0) {
        info->cores_disabled++;
        return;
    }
    for (uint32_t i = 0; i < info->core_count; i++)
        if (info->cores[i].apic_id == apic_id)
            return;
    if (info->core_count == MADT_MAX_CORES) {
        info->cores_ignored++;
        return;
    }
    info->cores[info->core_count++] = (struct madt_core){apic_id, uid};
}

static int parse_entry(const uint8_t *entry, uint8_t length, struct madt_info *info)
{
    switch (entry[0]) {
    case ENTRY_LAPIC:
        if (length < 8)
            return MADT_ERROR_ENTRY;
        add_core(info, entry[3], entry[2], read32(entry + 4));
        break;
    case ENTRY_X2APIC:
        if (length < 16)
            return MADT_ERROR_ENTRY;
        add_core(info, read32(entry + 4), read32(entry + 12), read32(entry + 8));
        break;
    case ENTRY_IOAPIC:
        if (length < 12)
            return MADT_ERROR_ENTRY;
        if (info->ioapic_count < MADT_MAX_IOAPICS)
            info->ioapics[info->ioapic_count++] =
                (struct madt_ioapic){entry[2], read32(entry + 4), read32(entry + 8)};
        break;
    case ENTRY_SOURCE_OVERRIDE:
        if (length < 10)
            return MADT_ERROR_ENTRY;
        if (info->override_count < MADT_MAX_OVERRIDES && entry[2] == 0 /* ISA bus */)
            info->overrides[info->override_count++] =
                (struct madt_override){.source = entry[3],
                                       .gsi = read32(entry + 4),
                                       .flags = (uint16_t)(entry[8] | entry[9] << 8)};
        break;
    case ENTRY_LAPIC_OVERRIDE:
        if (length < 12)
            return MADT_ERROR_ENTRY;
        info->lapic_address = read64(entry + 4);
        break;
    default:
        break;
    }
    return MADT_OK;
}

int madt_parse(const void *table, size_t available, struct madt_info *info)
{
    const uint8_t *bytes = table;
    memset(info, 0, sizeof(*info));
    if (available < MADT_FIXED_BYTES)
        return MADT_ERROR_TOO_SHORT;
    const struct acpi_header *header = table;
    if (memcmp(header->signature, "APIC", 4) != 0)
        return MADT_ERROR_SIGNATURE;
    if (header->length < MADT_FIXED_BYTES || header->length > available)
        return MADT_ERROR_LENGTH;
    if (!acpi_checksum_ok(table, header->length))
        return MADT_ERROR_CHECKSUM;
    info->lapic_address = read32(bytes + sizeof(struct acpi_header));
    info->legacy_pics = read32(bytes + sizeof(struct acpi_header) + 4) & 1;
    for (size_t offset = MADT_FIXED_BYTES; offset < header->length;) {
        if (header->length - offset < 2)
            return MADT_ERROR_ENTRY;
        uint8_t length = bytes[offset + 1];
        if (length < 2 || length > header->length - offset)
            return MADT_ERROR_ENTRY;
        int error = parse_entry(bytes + offset, length, info);
        if (error != MADT_OK)
            return error;
        offset += length;
    }
    return info->core_count == 0 ? MADT_ERROR_NO_CORES : MADT_OK;
}

const char *madt_error_text(int error)
{
    switch (error) {
    case MADT_OK:
        return "ok";
    case MADT_ERROR_TOO_SHORT:
        return "table shorter than the MADT header";
    case MADT_ERROR_SIGNATURE:
        return "signature is not APIC";
    case MADT_ERROR_LENGTH:
        return "length field out of range";
    case MADT_ERROR_CHECKSUM:
        return "checksum mismatch";
    case MADT_ERROR_ENTRY:
        return "an entry has a bad length";
    case MADT_ERROR_NO_CORES:
        return "no enabled processor";
    default:
        return "unknown error";
    }
}

int madt_put_boot_core_first(struct madt_info *info, uint32_t apic_id)
{
    for (uint32_t i = 0; i < info->core_count; i++) {
        if (info->cores[i].apic_id == apic_id) {
            struct madt_core boot = info->cores[i];
            memmove(&info->cores[1], &info->cores[0], i * sizeof(struct madt_core));
            info->cores[0] = boot;
            return 0;
        }
    }
    return -1;
}
