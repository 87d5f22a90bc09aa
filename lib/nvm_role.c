/* nvm_role.c: the NVDIMM the boot option nvm=ROLE,... gives a role (the pager's, BLK's tier,
 * a memory node's store): its range found in the ACPI NFIT by address, the one look-up the
 * pager, BLK and the memory node share. */
#include <formica/errors.h>
#include <formica/nfit.h>
#include <formica/nvm_role.h>
#include <formica/protocol/syscalls.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define NFIT_BUFFER_BYTES 8192

long nvm_range_of_role(const char *role, const char *who, uint64_t *physical, uint64_t *bytes)
{
    char roles[64] = "";
    kernel_option(NFIT_ROLES_OPTION, roles, sizeof roles);
    long index = nfit_role_index(roles, role);
    if (index < 0) {
        if (roles[0] != '\0') /* NVDIMMs were given roles, none this one */
            printf("%s: no NVDIMM is the %s's (nvm=%s)\n", who, role, roles);
        return -E_NOT_FOUND;
    }
    static uint8_t table[NFIT_BUFFER_BYTES];
    uint32_t signature;
    memcpy(&signature, "NFIT", 4);
    long length = system_call_firmware_table(signature, table, sizeof(table));
    if (length < 0) {
        printf("%s: no NVDIMM (ACPI NFIT: %s)\n", who, error_text(length));
        return length;
    }
    long error =
        nfit_pmem_range_by_address(table, (size_t)length, (unsigned)index, physical, bytes);
    if (error != 0)
        printf("%s: nvm=%s names a %s NVDIMM, but the NFIT has no such range (%s)\n", who, roles,
               role, error_text(error));
    return error;
}
