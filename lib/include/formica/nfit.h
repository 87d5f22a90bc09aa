/* nfit.h: the persistent-memory ranges of an ACPI NFIT (ACPI 6, 5.2.25:
 * System Physical Address Range structures, type 0, with the
 * persistent-memory range GUID), in table order or by address (the order
 * build/run attaches QEMU's NVDIMMs in). One parser for the m-kernel (which maps those ranges
 * write-back) and the servers that use an NVDIMM. Pure. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* The `index`-th (from 0) persistent-memory range of the NFIT in
 * `table`: 0, -E_NOT_FOUND (fewer ranges) or -E_INVALID (a malformed table). */
long nfit_pmem_range(const void *table, size_t length, unsigned index, uint64_t *base,
                     uint64_t *bytes);

/* The `index`-th range in ascending base address: the order QEMU places its
 * NVDIMMs in (the order build/run attaches them), which its NFIT need not
 * list them in (with two, QEMU 10 lists the later one first). */
long nfit_pmem_range_by_address(const void *table, size_t length, unsigned index, uint64_t *base,
                                uint64_t *bytes);

#define NFIT_ROLES_OPTION "nvm" /* the boot option nvm=ROLE,...: each range's role, in order */

/* Which range (from 0, by address) has `role` in `roles`, the value of the boot option
 * nvm=ROLE,... (build/run sets it: "pager", "tier", "pager,tier"); NULL
 * or empty means "pager" (one NVDIMM, the pager's). -E_NOT_FOUND when no
 * range has that role. */
long nfit_role_index(const char *roles, const char *role);
