/* nvm_role.h: the NVDIMM of a role in the boot option nvm=ROLE,... (lib/nvm_role.c). */
#pragma once
#include <stdint.h>

/* The physical range of the NVDIMM whose role is `role` ("pager", "tier", "memnode"; with
 * no nvm= option the first NVDIMM is the pager's): 0; -E_NOT_FOUND when no NVDIMM has that
 * role (logged as `who: ...` when nvm= gave roles to others) or there is no NFIT (logged);
 * another error, logged, when the NFIT does not give its range. */
long nvm_range_of_role(const char *role, const char *who, uint64_t *physical, uint64_t *bytes);
