/* local_memory.c: memstream's memory (local_memory.h): DRAM from the heap, or
 * the NVDIMM of role "local" mapped write-back, checked not to overlap the
 * NVDIMM of role "memnode" (the node's store, which memstream never maps). */
#include "local_memory.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/nfit.h>
#include <formica/nvm_role.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *local_kind_name(enum local_kind kind)
{
    return kind == LOCAL_NVM ? "nvm" : "dram";
}

bool local_kind_parse(const char *text, enum local_kind *kind)
{
    if (strcmp(text, "dram") == 0 || strcmp(text, "nvm") == 0) {
        *kind = strcmp(text, "nvm") == 0 ? LOCAL_NVM : LOCAL_DRAM;
        return true;
    }
    return false;
}

/* The store's NVDIMM, when the node has one: memstream's range must not touch it. */
static bool overlaps_the_store(uint64_t physical, uint64_t bytes)
{
    char roles[64] = "";
    kernel_option(NFIT_ROLES_OPTION, roles, sizeof roles);
    uint64_t store, store_bytes;
    if (nfit_role_index(roles, "memnode") < 0 ||
        nvm_range_of_role("memnode", "memstream", &store, &store_bytes) != 0)
        return false;
    return physical < store + store_bytes && store < physical + bytes;
}

static void *take_nvm(uint64_t bytes)
{
    uint64_t physical, size;
    if (nvm_range_of_role(LOCAL_NVM_ROLE, "memstream", &physical, &size) != 0) {
        printf("memstream: no local NVDIMM (build/run --memnode-local-nvm SIZE gives a node "
               "one): not run\n");
        return NULL;
    }
    if (size < bytes) {
        printf("memstream: the local NVDIMM holds %lu MiB, %lu MiB asked\n", size >> 20,
               bytes >> 20);
        return NULL;
    }
    if (overlaps_the_store(physical, bytes)) {
        printf("memstream: the local NVDIMM at 0x%lx overlaps the memory node's store: not run\n",
               physical);
        return NULL;
    }
    uint8_t *base;
    long error = device_map_whole(physical, bytes, &base);
    if (error != 0) {
        printf("memstream: cannot map the local NVDIMM at 0x%lx: %s\n", physical,
               error_text(error));
        return NULL;
    }
    printf("memstream: local NVDIMM at 0x%lx (%lu MiB), %lu MiB used\n", physical, size >> 20,
           bytes >> 20);
    return base;
}

void *local_memory_take(enum local_kind kind, uint64_t bytes)
{
    if (kind == LOCAL_NVM)
        return take_nvm(bytes);
    void *memory = malloc(bytes);
    if (memory == NULL)
        printf("memstream: cannot take %lu MiB of DRAM\n", bytes >> 20);
    return memory;
}
