/* tier_layout.c: the NVM tier's layout (tier.h): the identity header in
 * unit 0 (a pair of slots, lib/nvm_identity.c), one tag per line apart from
 * the data, then the lines; the checks at mount, the format, and the
 * recovery scan that reads every tag into the cache's hash index. A tier
 * that is not this disk's, or whose tags are corrupted, is refused and
 * left as it is. */
#include "cache_internal.h"
#include "tier.h"
#include <formica/errors.h>
#include <formica/kept_region.h>
#include <formica/nvm_persist.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t tag_check(uint32_t line, uint64_t low)
{
    uint64_t mixed = (low ^ ((uint64_t)line + 1) * 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    mixed ^= mixed >> 29;
    return (mixed * 0x94d049bb133111ebull) >> 50; /* 14 bits */
}

uint64_t tier_tag(uint32_t line, uint64_t block, enum tier_line_state state)
{
    if (state == TIER_FREE)
        return 0;
    uint64_t low = (block & TIER_TAG_BLOCK_MASK) | (uint64_t)state << TIER_TAG_BLOCK_BITS;
    return low | tag_check(line, low) << 50;
}

bool tier_tag_decode(uint32_t line, uint64_t tag, uint64_t *block, enum tier_line_state *state)
{
    uint64_t low = tag & ((1ull << 50) - 1);
    uint32_t kind = (uint32_t)(low >> TIER_TAG_BLOCK_BITS);
    *block = low & TIER_TAG_BLOCK_MASK;
    *state = (enum tier_line_state)kind;
    if (tag == 0)
        return true;
    return (kind == TIER_CLEAN || kind == TIER_DIRTY) && tag >> 50 == tag_check(line, low);
}

static uint64_t tag_area_bytes(uint32_t lines)
{
    return ((uint64_t)lines * 8 + CACHE_BLOCK_BYTES - 1) / CACHE_BLOCK_BYTES * CACHE_BLOCK_BYTES;
}

uint32_t tier_lines_for(uint64_t bytes, uint32_t sets, uint32_t shards)
{
    if (bytes <= TIER_HEADER_BYTES || sets == 0 || shards == 0)
        return 0;
    uint64_t lines = (bytes - TIER_HEADER_BYTES) / (CACHE_BLOCK_BYTES + 8);
    while (lines > 0 &&
           TIER_HEADER_BYTES + tag_area_bytes((uint32_t)lines) + lines * CACHE_BLOCK_BYTES > bytes)
        lines--;
    lines -= lines % ((uint64_t)sets * shards);
    if (lines < (uint64_t)TIER_MIN_WAYS * sets * shards || lines > UINT32_MAX)
        return 0;
    return (uint32_t)lines;
}

static void set_geometry(struct tier *tier, uint32_t sets, uint32_t lines)
{
    tier->sets = sets;
    tier->lines_count = lines;
    tier->ways = lines / sets;
    tier->header = (struct nvm_identity *)tier->base;
    tier->tags = (uint64_t *)(tier->base + TIER_HEADER_BYTES);
    tier->lines = tier->base + TIER_HEADER_BYTES + tag_area_bytes(lines);
}

/* The disk's own block 0, checksummed: which disk this is beside its size. */
static int disk_fingerprint(const struct cache_disk *disk, uint64_t *fingerprint)
{
    static uint8_t block[CACHE_BLOCK_BYTES];
    uint8_t *buffers[1] = {block};
    int error = disk->read(disk->context, 0, 1, buffers);
    if (error == 0)
        *fingerprint = kept_checksum(block, CACHE_BLOCK_BYTES);
    return error;
}

/* The smallest NVDIMM a tier of `sets` sets fits (TIER_MIN_WAYS lines each per shard). */
static uint64_t smallest_bytes(uint32_t sets, uint32_t shards)
{
    uint32_t lines = TIER_MIN_WAYS * sets * shards;
    return TIER_HEADER_BYTES + tag_area_bytes(lines) + (uint64_t)lines * CACHE_BLOCK_BYTES;
}

/* The sets of the tier found in the NVDIMM, else `asked` (a found tier keeps its own). */
static uint32_t sets_of(const uint8_t *base, uint64_t bytes, uint32_t asked)
{
    const struct nvm_identity *pair = (const struct nvm_identity *)base;
    int newest = nvm_identity_pair_newest(pair, TIER_MAGIC, TIER_VERSION, bytes);
    uint64_t found = newest >= 0 ? pair[newest].geometry[TIER_GEOMETRY_SETS] : 0;
    return found > 0 && found <= UINT32_MAX ? (uint32_t)found : asked;
}

int tier_prepare(struct tier *tier, uint8_t *base, uint64_t bytes, uint32_t sets, uint32_t shards,
                 const struct cache_disk *disk, const uint8_t *serial)
{
    memset(tier, 0, sizeof(*tier));
    tier->base = base;
    tier->bytes = bytes;
    tier->shards = shards;
    tier->identity.sectors = disk->blocks * (CACHE_BLOCK_BYTES / 512);
    if (serial != NULL)
        memcpy(tier->identity.serial, serial, sizeof tier->identity.serial);
    sets = sets_of(base, bytes, sets);
    uint32_t lines = tier_lines_for(bytes, sets, shards);
    if (lines == 0) {
        tier->state = BLK_TIER_TOO_SMALL;
        snprintf(tier->refusal, sizeof tier->refusal,
                 "the NVDIMM of %lu KiB is too small: %u sets of %u lines need %lu KiB",
                 (unsigned long)(bytes >> 10), sets, TIER_MIN_WAYS * shards,
                 (unsigned long)(smallest_bytes(sets, shards) >> 10));
        return -E_NO_SPACE;
    }
    set_geometry(tier, sets, lines);
    tier->hands = calloc(sets, sizeof(uint32_t));
    tier->lent_sets = calloc(sets, sizeof(bool));
    tier->pass_order = calloc(lines, sizeof(uint64_t));
    tier->pass_lines = calloc(lines, sizeof(uint32_t));
    tier->bound_lines = calloc(TIER_BOUND_MAX, sizeof(uint32_t));
    if (tier->hands == NULL || tier->lent_sets == NULL || tier->pass_order == NULL ||
        tier->pass_lines == NULL || tier->bound_lines == NULL)
        return -E_NO_MEMORY;
    return disk_fingerprint(disk, &tier->identity.fingerprint);
}

void tier_pool_add(struct tier *tier, uint8_t *data, uint64_t handle)
{
    if (tier->pool.count < TIER_LEND_POOL) {
        tier->pool.data[tier->pool.count] = data;
        tier->pool.handle[tier->pool.count++] = handle;
    }
}

void tier_release(struct tier *tier)
{
    free(tier->hands);
    free(tier->lent_sets);
    free(tier->pass_order);
    free(tier->pass_lines);
    free(tier->bound_lines);
    tier->bound_lines = NULL;
    tier->hands = NULL;
    tier->lent_sets = NULL;
    tier->pass_order = NULL;
    tier->pass_lines = NULL;
}

void tier_write_header(struct tier *tier, uint64_t flags)
{
    struct nvm_identity body = {.version = TIER_VERSION, .device_bytes = tier->bytes};
    memcpy(body.identity, &tier->identity, sizeof tier->identity);
    body.geometry[TIER_GEOMETRY_SETS] = tier->sets;
    body.geometry[TIER_GEOMETRY_SHARDS] = tier->shards;
    body.geometry[TIER_GEOMETRY_LINES] = tier->lines_count;
    body.geometry[TIER_GEOMETRY_FLAGS] = flags;
    body.geometry[TIER_GEOMETRY_LINES_OFFSET] = (uint64_t)(tier->lines - tier->base);
    nvm_identity_pair_update(tier->header, &body, TIER_MAGIC, TIER_VERSION);
}

/* Every tag free (persisted), then the header: a format cut short leaves
 * the old header (whose tags may be gone: only after a detach or a drop,
 * with nothing dirty) or the new one. */
static void format_layout(struct tier *tier)
{
    nvm_fill(tier->tags, 0, (uint64_t)tier->lines_count * 8);
    nvm_persist(tier->tags, (uint64_t)tier->lines_count * 8);
    tier_write_header(tier, 0);
}

/* The cache's index empty: every line free. */
static void forget_lines(struct cache *cache)
{
    memset(cache->buckets, 0, (size_t)(cache->bucket_mask + 1) * sizeof(struct cache_block *));
    for (uint32_t i = 0; i < cache->capacity; i++) {
        struct cache_block *block = &cache->blocks[i];
        uint8_t *data = block->data;
        *block = (struct cache_block){.data = data};
    }
    for (uint32_t i = 0; cache->tier != NULL && i < cache->tier->pool.count; i++)
        cache->tier->pool.line[i] = 0; /* no line has a copy any more */
    cache->stats.cached = cache->stats.dirty = 0;
}

int tier_format(struct tier *tier, struct cache *cache)
{
    forget_lines(cache);
    format_layout(tier);
    tier->state = BLK_TIER_ATTACHED;
    tier->refusal[0] = '\0';
    return 0;
}

static void refuse(struct tier *tier, const char *format, unsigned long a, unsigned long b,
                   unsigned long c, unsigned long d)
{
    tier->state = BLK_TIER_REFUSED;
    snprintf(tier->refusal, sizeof tier->refusal, format, a, b, c, d);
}

/* Line `line`'s tag into the index; false (the tier refused) when it is
 * corrupted. */
static bool scan_line(struct tier *tier, struct cache *cache, uint32_t line)
{
    uint64_t block;
    enum tier_line_state state;
    uint64_t tag = tier->tags[line];
    if (!tier_tag_decode(line, tag, &block, &state)) {
        refuse(tier, "line %lu's tag %#lx fails its check: corrupted tags", line, tag, 0, 0);
        return false;
    }
    if (state == TIER_FREE)
        return true;
    if (block >= cache->disk.blocks || tier_set_of(tier, block) != line / tier->ways) {
        refuse(tier, "line %lu names block %lu, outside the disk or its set: corrupted tags", line,
               block, 0, 0);
        return false;
    }
    struct cache_block *other = cache_lookup(cache, block);
    if (other != NULL) {
        refuse(tier, "lines %lu and %lu both name block %lu: corrupted tags",
               (unsigned long)(other - cache->blocks), line, block, 0);
        return false;
    }
    struct cache_block *slot = &cache->blocks[line];
    slot->number = block;
    slot->valid = true;
    slot->dirty = state == TIER_DIRTY;
    cache_hash_insert(cache, slot);
    cache->stats.cached++;
    cache->stats.dirty += slot->dirty;
    return true;
}

static bool scan_tags(struct tier *tier, struct cache *cache)
{
    for (uint32_t line = 0; line < tier->lines_count; line++)
        if (!scan_line(tier, cache, line)) {
            forget_lines(cache);
            return false;
        }
    return true;
}

/* A serial as text: its printable bytes, "none" when it is all zeros. */
static const char *serial_text(const uint8_t *serial, char *text)
{
    size_t length = 0;
    for (size_t i = 0; i < sizeof((struct tier_disk_identity *)0)->serial && serial[i]; i++)
        text[length++] = serial[i] >= 0x20 && serial[i] < 0x7f ? (char)serial[i] : '?';
    text[length] = '\0';
    return length > 0 ? text : "none";
}

/* The header found is this disk's: same size and serial. */
static bool same_disk(struct tier *tier, const struct nvm_identity *found)
{
    struct tier_disk_identity was;
    memcpy(&was, found->identity, sizeof was);
    if (memcmp(&was, &tier->identity, TIER_IDENTITY_COMPARED) == 0)
        return true;
    char then[24], now[24];
    tier->state = BLK_TIER_REFUSED;
    snprintf(tier->refusal, sizeof tier->refusal,
             "written for disk serial %s, %lu sectors; this disk is %s, %lu sectors",
             serial_text(was.serial, then), (unsigned long)was.sectors,
             serial_text(tier->identity.serial, now), (unsigned long)tier->identity.sectors);
    return false;
}

/* The disk's block 0 is what the tier last wrote there, or what a dirty
 * line 0 holds (a pass cut short after writing it). */
static bool fingerprint_matches(struct tier *tier, struct cache *cache, uint64_t recorded)
{
    if (tier->identity.fingerprint == recorded)
        return true;
    struct cache_block *zero = cache_lookup(cache, 0);
    return zero != NULL && zero->dirty &&
           kept_checksum(zero->data, CACHE_BLOCK_BYTES) == tier->identity.fingerprint;
}

/* A header that is not ours: blank (no magic in either slot: never
 * formatted, or a first format cut short) is formatted; anything else is
 * refused. */
static void mount_unknown(struct tier *tier, struct cache *cache)
{
    if (tier->header[0].magic == 0 && tier->header[1].magic == 0) {
        tier_format(tier, cache);
        printf("blk: tier: formatted the NVDIMM (%lu MiB) for this disk\n",
               (unsigned long)(tier->bytes >> 20));
        return;
    }
    refuse(tier,
           "the NVDIMM holds no valid tier header (magic %#lx: another layout's, or corrupted); "
           "boot without --nvm-tier or run `tier format`",
           tier->header[0].magic, 0, 0, 0);
}

void tier_mount(struct tier *tier, struct cache *cache)
{
    int newest = nvm_identity_pair_newest(tier->header, TIER_MAGIC, TIER_VERSION, tier->bytes);
    if (newest < 0) {
        mount_unknown(tier, cache);
        return;
    }
    const struct nvm_identity *found = &tier->header[newest];
    if (found->geometry[TIER_GEOMETRY_LINES] != tier->lines_count ||
        found->geometry[TIER_GEOMETRY_SHARDS] != tier->shards) {
        refuse(tier,
               "its geometry (%lu lines, %lu shards) is not this BLK's (%lu lines, %lu shards)",
               found->geometry[TIER_GEOMETRY_LINES], found->geometry[TIER_GEOMETRY_SHARDS],
               tier->lines_count, tier->shards);
        return;
    }
    if (found->geometry[TIER_GEOMETRY_FLAGS] & TIER_FLAG_DETACHED) {
        tier_format(tier, cache);
        printf("blk: tier: the NVDIMM was detached: starting clean\n");
        return;
    }
    if (!same_disk(tier, found) || !scan_tags(tier, cache))
        return;
    struct tier_disk_identity was;
    memcpy(&was, found->identity, sizeof was);
    if (!fingerprint_matches(tier, cache, was.fingerprint)) {
        if (cache->stats.dirty > 0) {
            uint32_t dirty = cache->stats.dirty;
            forget_lines(cache);
            refuse(tier,
                   "the disk was written without this tier (block 0's fingerprint %016lx, the "
                   "tier's %016lx) and the tier holds %lu dirty lines",
                   tier->identity.fingerprint, was.fingerprint, dirty, 0);
            return;
        }
        printf("blk: tier: the disk was written without this tier: its clean lines dropped\n");
        tier_format(tier, cache);
        return;
    }
    tier->identity.fingerprint = was.fingerprint; /* what the disk held at the tier's last write */
    tier->state = BLK_TIER_ATTACHED;
    tier_write_header(tier, 0); /* a mount: the generation counts it */
}
