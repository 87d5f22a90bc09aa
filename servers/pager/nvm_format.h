/* nvm_format.h: the pager's layout on the NVDIMM: a header with the table
 * of persistent keys, each with a block map, and every change to it made
 * durable in order through the flush layer (formica/nvm_persist.h): what a
 * key's map names is durable before the map names it. Pure apart from the
 * flush instructions, host-tested (under a crash model too). */
#pragma once
#include "space.h"
#include <stddef.h>
#include <stdint.h>

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
/* An empty header, durable before its magic is stored (a torn format is not valid). */
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

/* Entry `index` becomes `shape` (its key last): the map (every block
 * NVM_NO_UNIT) and the entry's fields are durable before the key is
 * stored, so a reboot finds the whole entry or a free one. */
void nvm_entry_create(void *base, struct nvm_header *header, int index,
                      const struct nvm_entry *shape);
/* Entry `index` is free again (its key 0, durable). */
void nvm_entry_forget(struct nvm_header *header, int index);
/* Block `block` of `entry` (NULL: a region without a key, whose blocks do
 * not outlive the pager's machine) stored at `unit`: the bytes, then its
 * checksum `sum`, then the unit in the map, each durable before the next.
 * A reboot finds the block's new bytes and sum, or its previous store
 * whole, or (an overwrite cut short) bytes that do not match its sum, which
 * the fault's check reports; never a map entry naming bytes not stored. */
void nvm_block_store(void *base, const struct nvm_entry *entry, uint32_t block, uint32_t unit,
                     const void *bytes, uint32_t block_bytes, uint64_t sum);
