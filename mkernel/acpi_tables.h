/* acpi_tables.h: byte layouts of the ACPI structures Formica reads (RSDP,
 * the common table header) and the checksum rule they all share. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct acpi_rsdp {
    char signature[8]; /* "RSD PTR " */
    uint8_t checksum;
    char oem_id[6];
    uint8_t revision;
    uint32_t rsdt_address;
    uint32_t length; /* revision >= 2 from here on */
    uint64_t xsdt_address;
    uint8_t extended_checksum;
    uint8_t reserved[3];
} __attribute__((packed));

struct acpi_header {
    char signature[4];
    uint32_t length;
    uint8_t revision;
    uint8_t checksum;
    char oem_id[6];
    char oem_table_id[8];
    uint32_t oem_revision;
    uint32_t creator_id;
    uint32_t creator_revision;
} __attribute__((packed));

/* True when the `length` bytes at `data` sum to zero modulo 256. */
static inline int acpi_checksum_ok(const void *data, size_t length)
{
    const uint8_t *bytes = data;
    uint8_t sum = 0;
    for (size_t i = 0; i < length; i++)
        sum = (uint8_t)(sum + bytes[i]);
    return sum == 0;
}
