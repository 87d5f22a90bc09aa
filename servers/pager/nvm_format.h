/* nvm_format.h: finding the NVDIMM (ACPI NFIT, SPA range structure of the
 * persistent-memory type) and the pager's layout on it: a header with the
 * table of persistent keys, each with a block map. Pure, host-tested. */
#pragma once
#include "space.h"
#include <stddef.h>
#include <stdint.h>

/* The first persistent-memory SPA range in an NFIT; 0 or -E_NOT_FOUND/-E_INVALID. */
long nfit_find_pmem(const void *table, size_t length, uint64_t *base, uint64_t *bytes);

#define NVM_MAGIC 0x314d564e4d524f46ull /* "FORMNVM1" */
#define NVM_VERSION 2u                  /* 2: each key has its user and each block its checksum */
#define NVM_KEYS 32
#define NVM_UNIT_BYTES 4096u
#define NVM_NO_UNIT 0xffffffffu

/* One persistent region: its shape, its user and where its block map lives.
 * The map is block_count uint32_t unit numbers (NVM_NO_UNIT: no copy), then,
 * 8-byte aligned, block_count uint64_t checksums of the blocks' last stores. */
struct nvm_entry {
    uint64_t key; /* 0: free entry */
    uint32_t block_bytes, block_count;
    uint32_t map_unit, map_units;
    uint32_t uid; /* the user that made it: only it (or uid 0) reattaches it */
    uint32_t reserved;
};

/* Unit 0 of the NVM. */
struct nvm_header {
    uint64_t magic;
    uint32_t version, unit_bytes;
    uint64_t total_bytes;
    struct nvm_entry entries[NVM_KEYS];
};

/* True when `base` holds a header written for an NVM of `total_bytes`. */
int nvm_header_valid(const struct nvm_header *header, uint64_t total_bytes);
void nvm_format(struct nvm_header *header, uint64_t total_bytes);
int nvm_find_key(const struct nvm_header *header, uint64_t key);
static inline uint32_t *nvm_map_of(void *base, const struct nvm_entry *entry)
{
    return (uint32_t *)((uint8_t *)base + (uint64_t)entry->map_unit * NVM_UNIT_BYTES);
}
/* Where the checksums start in a map of `block_count` blocks, and its size. */
static inline uint64_t nvm_sums_offset(uint32_t block_count)
{
    return ((uint64_t)block_count * sizeof(uint32_t) + 7) & ~7ull;
}
static inline uint64_t nvm_map_bytes(uint32_t block_count)
{
    return nvm_sums_offset(block_count) + (uint64_t)block_count * sizeof(uint64_t);
}
static inline uint64_t *nvm_sums_of(void *base, const struct nvm_entry *entry)
{
    return (uint64_t *)((uint8_t *)nvm_map_of(base, entry) + nvm_sums_offset(entry->block_count));
}
/* Builds the space in use: the header, every key's map and mapped blocks.
 * Returns the number of map entries dropped because they were invalid. */
uint32_t nvm_mark_used(void *base, const struct nvm_header *header, struct space *space);
