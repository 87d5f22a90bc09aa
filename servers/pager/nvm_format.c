/* nvm_format.c: the NFIT parser (ACPI 6, 5.2.25: SPA range structure, type 0,
 * with the persistent-memory range GUID) and the pager's NVM layout checks. */
#include "nvm_format.h"
#include <formica/errors.h>
#include <string.h>

#define ACPI_HEADER_BYTES 36
#define NFIT_FIRST_STRUCTURE 40 /* header + 4 reserved bytes */
#define NFIT_SPA_TYPE 0
#define NFIT_SPA_BYTES 56

/* 66F0D379-B4F3-4074-AC43-0D3318B78CDB, as stored (mixed endian). */
static const uint8_t pmem_guid[16] = {0x79, 0xd3, 0xf0, 0x66, 0xf3, 0xb4, 0x74, 0x40,
                                      0xac, 0x43, 0x0d, 0x33, 0x18, 0xb7, 0x8c, 0xdb};

static uint16_t read16(const uint8_t *bytes)
{
    return (uint16_t)(bytes[0] | bytes[1] << 8);
}

static uint64_t read64(const uint8_t *bytes)
{
    uint64_t value;
    memcpy(&value, bytes, 8);
    return value;
}

long nfit_find_pmem(const void *table, size_t length, uint64_t *base, uint64_t *bytes)
{
    const uint8_t *nfit = table;
    if (length < NFIT_FIRST_STRUCTURE || memcmp(nfit, "NFIT", 4) != 0)
        return -E_INVALID;
    uint32_t declared;
    memcpy(&declared, nfit + 4, 4);
    if (declared < NFIT_FIRST_STRUCTURE || declared > length)
        return -E_INVALID;
    for (size_t at = NFIT_FIRST_STRUCTURE; at + 4 <= declared;) {
        uint16_t type = read16(nfit + at), size = read16(nfit + at + 2);
        if (size < 4 || at + size > declared)
            return -E_INVALID;
        if (type == NFIT_SPA_TYPE && size >= NFIT_SPA_BYTES &&
            memcmp(nfit + at + 16, pmem_guid, 16) == 0 && read64(nfit + at + 40) != 0) {
            *base = read64(nfit + at + 32);
            *bytes = read64(nfit + at + 40);
            return 0;
        }
        at += size;
    }
    return -E_NOT_FOUND;
}

int nvm_header_valid(const struct nvm_header *header, uint64_t total_bytes)
{
    return header->magic == NVM_MAGIC && header->version == NVM_VERSION &&
           header->unit_bytes == NVM_UNIT_BYTES && header->total_bytes == total_bytes;
}

void nvm_format(struct nvm_header *header, uint64_t total_bytes)
{
    memset(header, 0, sizeof(*header));
    header->version = NVM_VERSION;
    header->unit_bytes = NVM_UNIT_BYTES;
    header->total_bytes = total_bytes;
    header->magic = NVM_MAGIC; /* last: a torn format is not valid */
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
        entry->key = 0;
        return 1;
    }
    uint32_t *map = nvm_map_of(base, entry);
    for (uint32_t block = 0; block < entry->block_count; block++) {
        if (map[block] == NVM_NO_UNIT || space_mark(space, map[block], units_per_block))
            continue;
        map[block] = NVM_NO_UNIT;
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
