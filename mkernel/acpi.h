/* acpi.h: finding ACPI tables (RSDP → XSDT/RSDT → table by signature) and
 * ACPI power-off (S5 from the FADT and the DSDT's \_S5 package). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "acpi_tables.h"

/* Finds the RSDP (from the loader, else by scanning the EBDA and BIOS area). */
bool acpi_init(uint64_t rsdp_from_loader);
/* The `index`-th table with `signature` whose checksum is good, or NULL. */
const struct acpi_header *acpi_find_table(const char signature[4], unsigned index);
/* Enters S5 through the FADT's PM1 control registers; returns if that fails. */
void acpi_power_off(void);
