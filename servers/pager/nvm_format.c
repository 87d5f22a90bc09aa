/* nvm_format.c: the pager's NVM layout: its checks at mount and its
 * changes, each made durable in order through the flush layer. */
#include "nvm_format.h"
#include <formica/nvm_persist.h>
#include <string.h>

int nvm_header_valid(const struct nvm_header *header, uint64_t total_bytes)
{
    return header->magic == NVM_MAGIC && header->version == NVM_VERSION &&
           header->unit_bytes == NVM_UNIT_BYTES && header->total_bytes == total_bytes;
}

void nvm_format(struct nvm_header *header, uint64_t total_bytes)
{
    struct nvm_header empty = {
        .version = NVM_VERSION, .unit_bytes = NVM_UNIT_BYTES, .total_bytes = total_bytes};
    nvm_write_persist(header, &empty, sizeof empty); /* magic 0: not valid yet */
    nvm_store64_persist(&header->magic, NVM_MAGIC);
}

int nvm_find_key(const struct nvm_header *header, uint64_t key)
{
    for (int i = 0; i < NVM_KEYS; i++)
        if (key != 0 && header->entries[i].key == key)
            return i;
    return -1;
}

/* An entry whose map does not fit or overlaps is forgotten. */
static uint32_t mark_entry(void *base, struct nvm_entry *entry, struct space *space)
{
    uint32_t dropped = 0, units_per_block = entry->block_bytes / NVM_UNIT_BYTES;
    if (units_per_block == 0 || !space_mark(space, entry->map_unit, entry->map_units) ||
        nvm_map_bytes(entry->block_count) > (uint64_t)entry->map_units * NVM_UNIT_BYTES) {
        nvm_store64_persist(&entry->key, 0);
        return 1;
    }
    uint32_t *map = nvm_map_of(base, entry);
    for (uint32_t block = 0; block < entry->block_count; block++) {
        if (map[block] == NVM_NO_UNIT || space_mark(space, map[block], units_per_block))
            continue;
        nvm_store32_persist(&map[block], NVM_NO_UNIT);
        dropped++;
    }
    return dropped;
}

uint32_t nvm_mark_used(void *base, const struct nvm_header *header, struct space *space)
{
    uint32_t dropped = 0;
    space_mark(space, 0, 1);
    for (int i = 0; i < NVM_KEYS; i++) {
        struct nvm_entry *entry = (struct nvm_entry *)&header->entries[i];
        if (entry->key != 0)
            dropped += mark_entry(base, entry, space);
    }
    return dropped;
}

void nvm_entry_create(void *base, struct nvm_header *header, int index,
                      const struct nvm_entry *shape)
{
    struct nvm_entry *entry = &header->entries[index];
    struct nvm_entry unkeyed = *shape;
    unkeyed.key = 0;
    nvm_fill(nvm_map_of(base, &unkeyed), 0xff, (uint64_t)unkeyed.map_units * NVM_UNIT_BYTES);
    nvm_flush(nvm_map_of(base, &unkeyed), (uint64_t)unkeyed.map_units * NVM_UNIT_BYTES);
    nvm_write_persist(entry, &unkeyed, sizeof unkeyed); /* the fence covers the map too */
    nvm_store64_persist(&entry->key, shape->key);
}

void nvm_entry_forget(struct nvm_header *header, int index)
{
    nvm_store64_persist(&header->entries[index].key, 0);
}

void nvm_block_store(void *base, const struct nvm_entry *entry, uint32_t block, uint32_t unit,
                     const void *bytes, uint32_t block_bytes, uint64_t sum)
{
    void *to = (uint8_t *)base + (uint64_t)unit * NVM_UNIT_BYTES;
    if (entry == NULL) {
        memcpy(to, bytes, block_bytes);
        return;
    }
    nvm_write_persist(to, bytes, block_bytes);
    nvm_store64_persist(&nvm_sums_of(base, entry)[block], sum);
    uint32_t *map = nvm_map_of(base, entry);
    if (map[block] != unit)
        nvm_store32_persist(&map[block], unit);
}
