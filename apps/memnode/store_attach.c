/* store_attach.c: the memory node's store at start (store_attach.h): the
 * NVDIMM of role "memnode" mapped write-back and opened with the cluster id
 * of the boot option memnode_cluster=, or DRAM when there is none. */
#include "store_attach.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/nvm_persist.h>
#include <formica/nvm_role.h>
#include <formica/protocol/syscalls.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

static long attach_dram(struct node_store *store, uint64_t capacity_bytes)
{
    long result = memory_grow(capacity_bytes);
    if (result < 0) {
        printf("memnode: cannot reserve %lu MiB: %s\n", capacity_bytes >> 20, error_text(result));
        return result;
    }
    store->memory = (uint8_t *)result;
    store->capacity_bytes = capacity_bytes;
    store->generation = read_timestamp_counter() | 1; /* this boot's: differs after a restart */
    return 0;
}

static const char *opened_text(enum memnode_store_opened opened)
{
    return opened == MEMNODE_STORE_FORMATTED ? "formatted" : "store found";
}

static long attach_nvm(struct node_store *store, uint32_t node_id, uint64_t capacity_bytes,
                       uint64_t physical, uint64_t bytes)
{
    char text[40] = "";
    kernel_option("memnode_cluster", text, sizeof text);
    if (!memnode_cluster_parse(text, store->cluster)) {
        printf("memnode: NVM given but no cluster id (memnode_cluster=%s is not 32 hex digits): "
               "not served\n",
               text);
        store->refused = true;
        return 0;
    }
    uint8_t *base;
    long error = device_map_whole(physical, bytes, &base);
    if (error != 0) {
        printf("memnode: cannot map the NVDIMM at 0x%lx: %s\n", physical, error_text(error));
        return error;
    }
    char why[160];
    enum memnode_store_opened opened =
        memnode_store_open(&store->nvm, base, bytes, store->cluster, node_id, why, sizeof why);
    if (opened == MEMNODE_STORE_FOREIGN || opened == MEMNODE_STORE_CORRUPT) {
        printf("memnode: %s: not served\n", why);
        store->refused = true;
        return 0;
    }
    store->persistent = true;
    store->memory = store->nvm.data;
    uint64_t held = store->nvm.units * MEMNODE_STORE_UNIT;
    store->capacity_bytes = capacity_bytes < held ? capacity_bytes : held;
    store->generation = store->nvm.generation;
    printf("memnode: NVM at 0x%lx, %lu MiB, %s: generation %lu, %lu blocks kept; made durable "
           "with %s and sfence\n",
           physical, bytes >> 20, opened_text(opened), store->generation, store->nvm.blocks_found,
           nvm_flush_kind_name(nvm_flush_kind_in_use()));
    return 0;
}

long node_store_attach(struct node_store *store, uint32_t node_id, uint64_t capacity_bytes)
{
    memset(store, 0, sizeof(*store));
    uint64_t physical, bytes;
    if (nvm_range_of_role("memnode", "memnode", &physical, &bytes) == 0)
        return attach_nvm(store, node_id, capacity_bytes, physical, bytes);
    return attach_dram(store, capacity_bytes);
}
