/* nfit.h: the persistent-memory ranges of an ACPI NFIT (ACPI 6, 5.2.25:
 * System Physical Address Range structures, type 0, with the
 * persistent-memory range GUID), in table order: QEMU lists its NVDIMMs in
 * slot order. One parser for the m-kernel (which maps those ranges
 * write-back) and the servers that use an NVDIMM. Pure. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* The `index`-th (from 0) persistent-memory range of the NFIT in
 * `table`: 0, -E_NOT_FOUND (fewer ranges) or -E_INVALID (a malformed table). */
long nfit_pmem_range(const void *table, size_t length, unsigned index, uint64_t *base,
                     uint64_t *bytes);
