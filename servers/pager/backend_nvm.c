/* backend_nvm.c: the NVM backend: a QEMU NVDIMM found through the ACPI NFIT,
 * mapped write-back with SYS_DEVICE_MAP and used as byte-addressable store
 * (a copy per swap). Persistent keys keep their block maps in the NVM, each
 * change durable in order through the flush layer (docs/pager.md). */
#include "nvm_format.h"
#include "pager.h"
#include <formica/refusal_log.h>
#include <formica/device.h>
#include <formica/ica.h>
#include <formica/nvm_order_record.h>
#include <formica/nvm_persist.h>
#include <formica/nvm_role.h>
#include <formica/request.h>
#include <formica/user.h>
#include <formica/users.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    bool mounted;
    uint8_t *base;
    uint64_t bytes;
    struct space space;
    uint64_t promised_units; /* free units promised to attached clients */
} nvm;

/* The region's layout is formatted only when no valid header is found, so a
 * restarted pager finds its predecessor's layout and persistent keys. */
static long nvm_mount(void)
{
    uint64_t physical, bytes;
    long error = nvm_range_of_role("pager", "pager", &physical, &bytes);
    if (error == 0 && (error = device_map_whole(physical, bytes, &nvm.base)) != 0)
        printf("pager: cannot map the NVDIMM at 0x%lx: %s\n", physical, error_text(error));
    if (error != 0)
        return error;
    nvm.bytes = bytes;
    bool recording = nvm_record_open(nvm.base, bytes);
    uint32_t units = (uint32_t)(bytes / NVM_UNIT_BYTES);
    uint64_t *bits = malloc(((units + 63) / 64) * sizeof(uint64_t));
    if (bits == NULL)
        return -E_NO_MEMORY;
    space_init(&nvm.space, bits, units);
    struct nvm_header *header = (struct nvm_header *)nvm.base;
    bool found = nvm_header_valid(header, bytes);
    if (!found)
        nvm_format(header, bytes);
    uint32_t dropped = nvm_mark_used(nvm.base, header, &nvm.space);
    printf("pager: NVDIMM at 0x%lx, %lu MiB, %s, %u units in use%s; made durable with %s and "
           "sfence%s\n",
           physical, bytes >> 20, found ? "pager layout found" : "formatted", nvm.space.used,
           dropped ? " (invalid map entries dropped)" : "",
           nvm_flush_kind_name(nvm_flush_kind_in_use()),
           recording ? "; recording the order (nvm_record)" : "");
    nvm.mounted = true;
    return 0;
}

static struct nvm_header *header_of_nvm(void)
{
    return (struct nvm_header *)nvm.base;
}

static uint32_t units_per_block(const struct client *client)
{
    return client->block_bytes / NVM_UNIT_BYTES;
}

/* The previous contents of a persistent key become the client's backend copies. */
static long reattach(struct client *client, int index)
{
    struct nvm_entry *entry = &header_of_nvm()->entries[index];
    if (entry->block_bytes != client->block_bytes || entry->block_count != client->block_count) {
        printf("pager: NVM key %lu holds %u blocks of %u bytes, not %u of %u\n", entry->key,
               entry->block_count, entry->block_bytes, client->block_count, client->block_bytes);
        return -E_EXISTS;
    }
    const uint32_t *map = nvm_map_of(nvm.base, entry);
    const uint64_t *sums = nvm_sums_of(nvm.base, entry);
    for (uint32_t block = 0; block < client->block_count; block++) {
        if (map[block] == NVM_NO_UNIT)
            continue;
        client->slot[block] = map[block];
        client->sum[block] = sums[block];
        client->state[block] = BLOCK_ON_BACKEND;
        client->has_copy[block] = 1;
    }
    client->backend_entry = index;
    return 1;
}

static int free_entry(void)
{
    for (int i = 0; i < NVM_KEYS; i++)
        if (header_of_nvm()->entries[i].key == 0)
            return i;
    return -1;
}

/* A new persistent key: an entry and an empty block map in the NVM. */
static long create_entry(struct client *client)
{
    int index = free_entry();
    uint32_t map_units =
        (uint32_t)((nvm_map_bytes(client->block_count) + NVM_UNIT_BYTES - 1) / NVM_UNIT_BYTES);
    uint32_t rounded = 1;
    while (rounded < map_units)
        rounded <<= 1;
    uint32_t map_unit = index < 0 ? NVM_NO_UNIT : space_take(&nvm.space, rounded);
    if (map_unit == NVM_NO_UNIT)
        return -E_NO_SPACE;
    struct nvm_entry shape = {client->persistent_key,
                              client->block_bytes,
                              client->block_count,
                              map_unit,
                              rounded,
                              client->uid,
                              0};
    nvm_entry_create(nvm.base, header_of_nvm(), index, &shape);
    client->backend_entry = index;
    return 0;
}

static void forget_entry(int index)
{
    struct nvm_entry *entry = &header_of_nvm()->entries[index];
    nvm_entry_forget(header_of_nvm(), index);
    space_give(&nvm.space, entry->map_unit, entry->map_units);
}

static uint64_t units_held(const struct client *client)
{
    uint64_t held = 0;
    for (uint32_t block = 0; block < client->block_count; block++)
        if (client->slot[block] != PAGER_NO_SLOT)
            held += units_per_block(client);
    return held;
}

/* The blocks an existing key holds, or a refusal: the key is another
 * user's (uid 0 excepted), in use by a living client, or of another shape. */
static long key_usable(const struct client *client, int index, uint64_t *held_units)
{
    const struct nvm_entry *entry = &header_of_nvm()->entries[index];
    if (entry->uid != client->uid && client->uid != USER_ROOT) {
        if (refusal_may_print("pager", client->account))
            printf("pager: NVM key %lu belongs to uid %u: pid %u (uid %u) may not reattach it\n",
                   entry->key, entry->uid, client->pid, client->uid);
        return -E_PERMISSION;
    }
    const struct client *holder = client_with_key(PAGER_BACKEND_NVM, entry->key);
    if (holder != NULL && holder != client) {
        if (refusal_may_print("pager", client->account))
            printf("pager: NVM key %lu is in use by pid %u\n", entry->key, holder->pid);
        return -E_BUSY;
    }
    if (entry->block_bytes != client->block_bytes || entry->block_count != client->block_count) {
        if (refusal_may_print("pager", client->account))
            printf("pager: NVM key %lu holds %u blocks of %u bytes, not %u of %u\n", entry->key,
                   entry->block_count, entry->block_bytes, client->block_count,
                   client->block_bytes);
        return -E_EXISTS;
    }
    const uint32_t *map = nvm_map_of(nvm.base, entry);
    *held_units = 0;
    for (uint32_t block = 0; block < entry->block_count; block++)
        *held_units += map[block] != NVM_NO_UNIT ? units_per_block(client) : 0;
    return 0;
}

/* Units free and not promised to an attached client. */
static uint64_t units_available(void)
{
    uint64_t free_units = space_free_units(&nvm.space);
    return free_units > nvm.promised_units ? free_units - nvm.promised_units : 0;
}

/* A new key: the keys of one user (uid 0 aside) hold at most half the NVM,
 * attached or not, so no user keeps the NVDIMM to itself across reboots. */
static long key_share(const struct client *client)
{
    uint64_t held = 0;
    for (int i = 0; i < NVM_KEYS; i++) {
        const struct nvm_entry *entry = &header_of_nvm()->entries[i];
        if (entry->key != 0 && entry->uid == client->uid)
            held += (uint64_t)entry->block_bytes * entry->block_count;
    }
    if (client->uid == USER_ROOT || held + client->bytes <= nvm.bytes / 2)
        return 0;
    if (refusal_may_print("pager", client->account))
        printf("pager: uid %u's NVM keys would hold %lu KiB, more than half of the NVM's %lu "
               "KiB\n",
               client->uid, (held + client->bytes) >> 10, nvm.bytes >> 10);
    return -E_QUOTA;
}

/* Before the client's tables exist: the NVDIMM, the key and the room. */
static long nvm_fits(const struct client *client)
{
    long error = nvm.mounted ? 0 : nvm_mount();
    if (error != 0)
        return error;
    uint64_t held = 0;
    int index = nvm_find_key(header_of_nvm(), client->persistent_key);
    if (index >= 0 && (error = key_usable(client, index, &held)) != 0)
        return error;
    if (client->persistent_key != 0 && index < 0 && (error = key_share(client)) != 0)
        return error;
    if (client->persistent_key != 0 && index < 0 && free_entry() < 0) {
        if (refusal_may_print("pager", client->account))
            printf("pager: NVM has no free key entry (%d keys)\n", NVM_KEYS);
        return -E_NO_SPACE;
    }
    uint64_t wanted = client->bytes / NVM_UNIT_BYTES - held;
    if (wanted > units_available()) {
        if (refusal_may_print("pager", client->account))
            printf("pager: NVM too small: %lu KiB asked, %lu KiB free\n", client->bytes >> 10,
                   units_available() * 4);
        return -E_NO_SPACE;
    }
    return 0;
}

/* Every block of the region must fit: space not yet used by the client is
 * promised to it, and new clients see only what is not promised. */
static long nvm_attach(struct client *client)
{
    long error = nvm.mounted ? 0 : nvm_mount();
    if (error != 0)
        return error;
    long result = 0;
    if (client->persistent_key != 0) {
        int index = nvm_find_key(header_of_nvm(), client->persistent_key);
        result = index >= 0 ? reattach(client, index) : create_entry(client);
    }
    uint64_t wanted = client->bytes / NVM_UNIT_BYTES - units_held(client);
    uint64_t free_units = space_free_units(&nvm.space);
    uint64_t available = free_units > nvm.promised_units ? free_units - nvm.promised_units : 0;
    if (result >= 0 && wanted > available) {
        printf("pager: NVM too small: %lu KiB asked, %lu KiB free\n", client->bytes >> 10,
               available * 4);
        if (result == 0 && client->backend_entry >= 0)
            forget_entry(client->backend_entry); /* the key was new: nothing to keep */
        return -E_NO_SPACE;
    }
    if (result >= 0)
        nvm.promised_units += wanted;
    return result;
}

static uint8_t *unit_address(uint32_t unit)
{
    return nvm.base + (uint64_t)unit * NVM_UNIT_BYTES;
}

static long nvm_store(struct client *client, uint32_t block, uint64_t data_ica)
{
    if (client->slot[block] == PAGER_NO_SLOT) {
        uint32_t unit = space_take(&nvm.space, units_per_block(client));
        if (unit == NVM_NO_UNIT)
            return -E_NO_SPACE;
        client->slot[block] = unit;
        nvm.promised_units -= units_per_block(client);
    }
    const struct nvm_entry *entry =
        client->backend_entry >= 0 ? &header_of_nvm()->entries[client->backend_entry] : NULL;
    nvm_block_store(nvm.base, entry, block, client->slot[block], ica_address(data_ica),
                    client->block_bytes, client->sum[block]);
    ica_free(data_ica);
    store_completed(client, block, 0);
    return 0;
}

static long nvm_retrieve(struct client *client, uint32_t block, uint64_t data_ica)
{
    memcpy(ica_address(data_ica), unit_address(client->slot[block]), client->block_bytes);
    return 0;
}

static uint64_t nvm_capacity_bytes(void)
{
    return nvm.bytes;
}

static long nvm_wait_one(void)
{
    return -E_NOT_FOUND; /* stores are copies, done at once */
}

/* With nvm_record on: where the client's key lives, then the order of every
 * write, flush and fence since the mount or the last client's end, for a
 * checker (tests/integration/nvm_order.py). */
static void dump_order(const struct client *client)
{
    if (!nvm_recording())
        return;
    if (client->backend_entry >= 0) {
        const struct nvm_entry *entry = &header_of_nvm()->entries[client->backend_entry];
        printf("@json {\"kind\":\"nvm_layout\",\"who\":\"pager\",\"key\":%lu,"
               "\"header_bytes\":%lu,\"entry_offset\":%lu,\"map_offset\":%lu,"
               "\"sums_offset\":%lu,\"block_bytes\":%u,\"block_count\":%u,"
               "\"unit_bytes\":%u}\n",
               entry->key, sizeof(struct nvm_header), (uint64_t)((const uint8_t *)entry - nvm.base),
               (uint64_t)entry->map_unit * NVM_UNIT_BYTES,
               (uint64_t)entry->map_unit * NVM_UNIT_BYTES + nvm_sums_offset(entry->block_count),
               entry->block_bytes, entry->block_count, NVM_UNIT_BYTES);
    }
    nvm_record_dump("pager");
}

static void nvm_detach(struct client *client, bool keep_contents)
{
    nvm.promised_units -= client->bytes / NVM_UNIT_BYTES - units_held(client);
    dump_order(client);
    if (keep_contents && client->backend_entry >= 0)
        return;
    for (uint32_t block = 0; block < client->block_count; block++)
        if (client->slot[block] != PAGER_NO_SLOT)
            space_give(&nvm.space, client->slot[block], units_per_block(client));
    if (client->backend_entry >= 0)
        forget_entry(client->backend_entry);
}

/* A kept slot is already in use when the key's map in the NVM names it. */
static bool marked_by_key(const struct client *client, uint32_t block)
{
    if (client->backend_entry < 0)
        return false;
    struct nvm_entry *entry = &header_of_nvm()->entries[client->backend_entry];
    return nvm_map_of(nvm.base, entry)[block] == client->slot[block];
}

/* Undoes the marks of the blocks before `end` (a reattach that failed). */
static void give_back_marked(const struct client *client, uint32_t end)
{
    for (uint32_t block = 0; block < end; block++)
        if (client->slot[block] != PAGER_NO_SLOT && !marked_by_key(client, block))
            space_give(&nvm.space, client->slot[block], units_per_block(client));
}

/* A kept client after a pager restart: the NVDIMM as it is (not formatted),
 * its placed blocks marked used, the rest of its region promised. */
static long nvm_reattach(struct client *client)
{
    long error = nvm.mounted ? 0 : nvm_mount();
    if (error == 0 && client->persistent_key != 0) {
        client->backend_entry = nvm_find_key(header_of_nvm(), client->persistent_key);
        if (client->backend_entry < 0)
            error = -E_NOT_FOUND; /* the key's entry is gone: its blocks are not ours */
    }
    uint32_t block = 0;
    for (; error == 0 && block < client->block_count; block++) {
        if (client->slot[block] == PAGER_NO_SLOT || marked_by_key(client, block))
            continue;
        if (!space_mark(&nvm.space, client->slot[block], units_per_block(client)))
            error = -E_INVALID;
    }
    if (error == -E_INVALID)
        give_back_marked(client, block - 1); /* the overlapping block was not marked */
    if (error != 0) {
        printf("pager: NVM: pid %u's kept blocks cannot be taken back: %s\n", client->pid,
               error_text(error));
        return error;
    }
    nvm.promised_units += client->bytes / NVM_UNIT_BYTES - units_held(client);
    return 0;
}

const struct backend backend_nvm = {
    .name = "nvm",
    .kind = PAGER_BACKEND_NVM,
    .fits = nvm_fits,
    .capacity_bytes = nvm_capacity_bytes,
    .attach = nvm_attach,
    .store = nvm_store,
    .retrieve = nvm_retrieve,
    .wait_one = nvm_wait_one,
    .detach = nvm_detach,
    .reattach = nvm_reattach,
};
