/* kept_stores.c: the stores in flight kept in the pager's kept region
 * (kept_stores.h): consecutive free slots per store, a record that counts
 * only when its bytes are whole, checked by checksum when copied back. */
#include "kept_stores.h"
#include <formica/kept_region.h>
#include <string.h>

#define SLOT_FINISHED 0x4b45505446494e53ull

static uint32_t slots_for(uint32_t block_bytes)
{
    return (block_bytes + KEPT_STORE_SLOT_BYTES - 1) / KEPT_STORE_SLOT_BYTES;
}

static bool taken(const struct kept_store_slot *slot)
{
    return __atomic_load_n(&slot->finished, __ATOMIC_ACQUIRE) == SLOT_FINISHED;
}

/* The first of `count` consecutive free slots, or KEPT_STORE_SLOTS. */
static uint32_t free_run(const struct kept_stores *stores, uint32_t count)
{
    uint32_t run = 0;
    for (uint32_t slot = 0; slot < KEPT_STORE_SLOTS; slot++) {
        run = taken(&stores->slots[slot]) ? 0 : run + 1;
        if (run == count)
            return slot + 1 - count;
    }
    return KEPT_STORE_SLOTS;
}

/* The first slot (the record) of pid's `block`, or NULL. */
static const struct kept_store_slot *record_of(const struct kept_stores *stores, uint32_t pid,
                                               uint32_t block)
{
    for (uint32_t slot = 0; slot < KEPT_STORE_SLOTS; slot++) {
        const struct kept_store_slot *record = &stores->slots[slot];
        if (taken(record) && record->part == 0 && record->pid == pid && record->block == block)
            return record;
    }
    return NULL;
}

bool kept_stores_have_room(const struct kept_stores *stores, uint32_t block_bytes)
{
    uint32_t count = slots_for(block_bytes);
    return count >= 1 && count <= KEPT_STORE_SLOTS && free_run(stores, count) < KEPT_STORE_SLOTS;
}

/* The bytes and the continuation slots first, the record's marker last: a
 * pager that ends in between leaves no record that names torn bytes. */
bool kept_stores_keep(struct kept_stores *stores, uint32_t pid, uint32_t block,
                      const uint8_t *bytes, uint32_t block_bytes, uint64_t sum)
{
    if (!kept_stores_have_room(stores, block_bytes))
        return false;
    uint32_t count = slots_for(block_bytes), first = free_run(stores, count);
    memcpy(stores->bytes[first], bytes, block_bytes);
    for (uint32_t part = 1; part < count; part++) {
        struct kept_store_slot *slot = &stores->slots[first + part];
        *slot = (struct kept_store_slot){.pid = pid, .block = block, .part = part};
        __atomic_store_n(&slot->finished, SLOT_FINISHED, __ATOMIC_RELEASE);
    }
    struct kept_store_slot *record = &stores->slots[first];
    *record = (struct kept_store_slot){
        .pid = pid, .block = block, .bytes = block_bytes, .sum = sum, .slots = count};
    __atomic_store_n(&record->finished, SLOT_FINISHED, __ATOMIC_RELEASE);
    return true;
}

/* The record first, then its continuation slots. */
void kept_stores_end(struct kept_stores *stores, uint32_t pid, uint32_t block)
{
    const struct kept_store_slot *record = record_of(stores, pid, block);
    if (record == NULL)
        return;
    uint32_t first = (uint32_t)(record - stores->slots), count = record->slots;
    for (uint32_t part = 0; part < count && first + part < KEPT_STORE_SLOTS; part++)
        __atomic_store_n(&stores->slots[first + part].finished, 0, __ATOMIC_RELEASE);
}

bool kept_stores_copy_back(const struct kept_stores *stores, uint32_t pid, uint32_t block,
                           uint8_t *into, uint32_t block_bytes)
{
    const struct kept_store_slot *record = record_of(stores, pid, block);
    uint32_t first = record != NULL ? (uint32_t)(record - stores->slots) : 0;
    if (record == NULL || record->bytes != block_bytes || record->slots != slots_for(block_bytes) ||
        first + record->slots > KEPT_STORE_SLOTS)
        return false;
    if (kept_checksum(stores->bytes[first], block_bytes) != record->sum)
        return false;
    memcpy(into, stores->bytes[first], block_bytes);
    return true;
}

void kept_stores_drop(struct kept_stores *stores, uint32_t pid)
{
    for (uint32_t slot = 0; slot < KEPT_STORE_SLOTS; slot++)
        if (stores->slots[slot].pid == pid)
            __atomic_store_n(&stores->slots[slot].finished, 0, __ATOMIC_RELEASE);
}
