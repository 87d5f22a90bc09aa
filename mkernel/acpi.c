/* acpi.c: the ACPI root tables. The RSDP is checked (both checksums), the
 * XSDT preferred over the RSDT, and every table's checksum is verified
 * before it is handed out, so a corrupt table is reported, not trusted. */
#include "acpi.h"
#include "console.h"
#include "layout.h"
#include "x86.h"
#include <string.h>

static const struct acpi_header *root_table;
static bool root_is_xsdt;

static const struct acpi_rsdp *rsdp_check(uint64_t physical)
{
    const struct acpi_rsdp *rsdp = phys_to_virt(physical);
    if (memcmp(rsdp->signature, "RSD PTR ", 8) != 0 || !acpi_checksum_ok(rsdp, 20))
        return NULL;
    if (rsdp->revision >= 2 && !acpi_checksum_ok(rsdp, rsdp->length))
        return NULL;
    return rsdp;
}

static const struct acpi_rsdp *rsdp_scan(uint64_t start, uint64_t end)
{
    for (uint64_t address = start; address + 20 <= end; address += 16) {
        const struct acpi_rsdp *rsdp = rsdp_check(address);
        if (rsdp != NULL)
            return rsdp;
    }
    return NULL;
}

static const struct acpi_header *table_at(uint64_t physical)
{
    const struct acpi_header *header = phys_to_virt(physical);
    if (physical == 0 || header->length < sizeof(*header) ||
        !acpi_checksum_ok(header, header->length))
        return NULL;
    return header;
}

bool acpi_init(uint64_t rsdp_from_loader)
{
    const struct acpi_rsdp *rsdp = rsdp_from_loader ? rsdp_check(rsdp_from_loader) : NULL;
    if (rsdp == NULL) {
        uint64_t ebda = (uint64_t)(*(uint16_t *)phys_to_virt(0x40e)) << 4;
        if (ebda >= 0x80000 && ebda < 0xa0000)
            rsdp = rsdp_scan(ebda, ebda + 1024);
    }
    if (rsdp == NULL)
        rsdp = rsdp_scan(0xe0000, 0x100000);
    if (rsdp == NULL) {
        kprintf("acpi: no valid RSDP found\n");
        return false;
    }
    if (rsdp->revision >= 2 && rsdp->xsdt_address != 0)
        root_table = table_at(rsdp->xsdt_address);
    root_is_xsdt = root_table != NULL;
    if (root_table == NULL)
        root_table = table_at(rsdp->rsdt_address);
    if (root_table == NULL) {
        kprintf("acpi: RSDT/XSDT missing or corrupt\n");
        return false;
    }
    kprintf("acpi: %s at %p, revision %u, oem %.6s\n", root_is_xsdt ? "XSDT" : "RSDT",
            (const void *)root_table, rsdp->revision, rsdp->oem_id);
    return true;
}

const struct acpi_header *acpi_find_table(const char signature[4], unsigned index)
{
    if (root_table == NULL)
        return NULL;
    unsigned width = root_is_xsdt ? 8 : 4;
    unsigned count = (root_table->length - sizeof(struct acpi_header)) / width;
    const uint8_t *pointers = (const uint8_t *)(root_table + 1);
    for (unsigned i = 0; i < count; i++) {
        uint64_t physical = 0;
        memcpy(&physical, pointers + i * width, width);
        const struct acpi_header *header = phys_to_virt(physical);
        if (physical == 0 || memcmp(header->signature, signature, 4) != 0)
            continue;
        if (!acpi_checksum_ok(header, header->length)) {
            kprintf("acpi: table %.4s at 0x%lx has a bad checksum; ignored\n", signature, physical);
            continue;
        }
        if (index-- == 0)
            return header;
    }
    return NULL;
}

/* The SLP_TYPa value in the DSDT's "Name(_S5, Package(){a, b, ...})". */
static int sleep_type_s5(const struct acpi_header *dsdt)
{
    const uint8_t *aml = (const uint8_t *)dsdt;
    for (uint32_t i = sizeof(*dsdt); i + 8 < dsdt->length; i++) {
        if (memcmp(aml + i, "_S5_", 4) != 0 || aml[i + 4] != 0x12) /* PackageOp */
            continue;
        uint32_t cursor = i + 5;
        cursor += ((aml[cursor] >> 6) & 3) + 1; /* PkgLength */
        cursor++;                               /* NumElements */
        if (cursor >= dsdt->length)
            return -1;
        if (aml[cursor] == 0x0a) /* BytePrefix */
            cursor++;
        return cursor < dsdt->length ? aml[cursor] : -1;
    }
    return -1;
}

void acpi_power_off(void)
{
    const struct acpi_header *fadt = acpi_find_table("FACP", 0);
    if (fadt == NULL || fadt->length < 76)
        return;
    const uint8_t *bytes = (const uint8_t *)fadt;
    uint32_t dsdt_address, pm1a_control;
    memcpy(&dsdt_address, bytes + 40, 4);
    memcpy(&pm1a_control, bytes + 64, 4);
    const struct acpi_header *dsdt = table_at(dsdt_address);
    int sleep_type = dsdt != NULL ? sleep_type_s5(dsdt) : -1;
    if (sleep_type < 0 || pm1a_control == 0)
        return;
    port_out16((uint16_t)pm1a_control, (uint16_t)((sleep_type << 10) | (1 << 13)));
}
