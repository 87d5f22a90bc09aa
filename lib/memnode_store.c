/* memnode_store.c: a memory node's store in NVM (formica/memnode_store.h):
 * its layout, the identity check at start, the ordered store (data
 * flushed, one fence, the tag persisted) and the check before a block is
 * served. */
#include <formica/kept_region.h>
#include <formica/memnode_store.h>
#include <formica/nvm_persist.h>
#include <stdio.h>
#include <string.h>

#define TAG_BYTES sizeof(struct memnode_tag)
#define TAGS_AT MEMNODE_STORE_UNIT /* unit 0 holds the header pair */
#define TAG_READS 64               /* reads of a tag another machine may be writing */

enum geometry { GEOMETRY_TAGS_AT, GEOMETRY_UNITS, GEOMETRY_DATA_AT, GEOMETRY_UNIT_BYTES };

uint64_t memnode_tag_seal(const struct memnode_tag *tag)
{
    return kept_checksum(tag, offsetof(struct memnode_tag, valid)) | 1;
}

static uint64_t tag_units_for(uint64_t units)
{
    return (units * TAG_BYTES + MEMNODE_STORE_UNIT - 1) / MEMNODE_STORE_UNIT;
}

uint64_t memnode_store_units(uint64_t device_bytes)
{
    uint64_t total = device_bytes / MEMNODE_STORE_UNIT;
    if (total < 3)
        return 0;
    uint64_t units = (total - 1) * MEMNODE_STORE_UNIT / (MEMNODE_STORE_UNIT + TAG_BYTES);
    while (units > 0 && 1 + tag_units_for(units) + units > total)
        units--;
    return units;
}

static uint64_t data_offset(uint64_t units)
{
    return TAGS_AT + tag_units_for(units) * MEMNODE_STORE_UNIT;
}

static void place(struct memnode_store *store, uint8_t *base, uint64_t device_bytes)
{
    memset(store, 0, sizeof(*store));
    store->base = base;
    store->device_bytes = device_bytes;
    store->headers = (struct nvm_identity *)base;
    store->units = memnode_store_units(device_bytes);
    store->tags = (struct memnode_tag *)(base + TAGS_AT);
    store->data = base + data_offset(store->units);
}

static void identity_of(const uint8_t cluster[MEMNODE_CLUSTER_BYTES], uint32_t node_id,
                        uint8_t identity[NVM_IDENTITY_BYTES])
{
    memset(identity, 0, NVM_IDENTITY_BYTES);
    memcpy(identity, cluster, MEMNODE_CLUSTER_BYTES);
    memcpy(identity + MEMNODE_CLUSTER_BYTES, &node_id, sizeof node_id);
}

static struct nvm_identity body_for(const struct memnode_store *store)
{
    struct nvm_identity body = {
        .version = MEMNODE_STORE_VERSION, .device_bytes = store->device_bytes, .generation = 1};
    identity_of(store->cluster, store->node_id, body.identity);
    body.geometry[GEOMETRY_TAGS_AT] = TAGS_AT;
    body.geometry[GEOMETRY_UNITS] = store->units;
    body.geometry[GEOMETRY_DATA_AT] = data_offset(store->units);
    body.geometry[GEOMETRY_UNIT_BYTES] = MEMNODE_STORE_UNIT;
    return body;
}

/* Tags cleared and persisted first, then the header: a cut format is blank. */
static void format(struct memnode_store *store)
{
    nvm_fill(store->tags, 0, store->units * TAG_BYTES);
    nvm_persist(store->tags, store->units * TAG_BYTES);
    struct nvm_identity body = body_for(store);
    nvm_store64_persist(&store->headers[1].magic, 0);
    nvm_identity_write(&store->headers[0], &body, MEMNODE_STORE_MAGIC);
    store->generation = 1;
}

void memnode_cluster_text(const uint8_t cluster[MEMNODE_CLUSTER_BYTES], char text[33])
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < MEMNODE_CLUSTER_BYTES; i++) {
        text[2 * i] = digits[cluster[i] >> 4];
        text[2 * i + 1] = digits[cluster[i] & 15];
    }
    text[32] = 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool memnode_cluster_parse(const char *text, uint8_t cluster[MEMNODE_CLUSTER_BYTES])
{
    for (unsigned i = 0; i < MEMNODE_CLUSTER_BYTES; i++) {
        int high = hex_digit(text[2 * i]);
        int low = high < 0 ? -1 : hex_digit(text[2 * i + 1]);
        if (low < 0)
            return false;
        cluster[i] = (uint8_t)(high << 4 | low);
    }
    return text[2 * MEMNODE_CLUSTER_BYTES] == 0;
}

static bool blank(const struct memnode_store *store)
{
    return store->headers[0].magic == 0 && store->headers[1].magic == 0;
}

static bool geometry_matches(const struct memnode_store *store, const struct nvm_identity *header)
{
    struct nvm_identity expected = body_for(store);
    return memcmp(header->geometry, expected.geometry, sizeof expected.geometry) == 0;
}

static enum memnode_store_opened refuse_foreign(const struct nvm_identity *header,
                                                const struct memnode_store *store, char *why,
                                                size_t why_bytes)
{
    char theirs[33], ours[33];
    uint32_t their_node;
    memcpy(&their_node, header->identity + MEMNODE_CLUSTER_BYTES, sizeof their_node);
    memnode_cluster_text(header->identity, theirs);
    memnode_cluster_text(store->cluster, ours);
    snprintf(why, why_bytes, "NVM belongs to cluster %s node %u, not cluster %s node %u", theirs,
             their_node, ours, store->node_id);
    return MEMNODE_STORE_FOREIGN;
}

/* A tag read whole: another machine may be writing it one-sided (valid
 * cleared, the fields, the seal, each persisted), so a read that straddles
 * its steps is read again; true when the copy is cleared or sealed. */
static bool tag_snapshot(const struct memnode_tag *tag, struct memnode_tag *copy)
{
    for (unsigned reads = 0; reads < TAG_READS; reads++) {
        const volatile uint64_t *from = (const volatile uint64_t *)tag;
        uint64_t words[TAG_BYTES / sizeof(uint64_t)];
        for (unsigned i = 0; i < TAG_BYTES / sizeof(uint64_t); i++)
            words[i] = from[i];
        memcpy(copy, words, TAG_BYTES);
        if (copy->valid == 0 || copy->valid == memnode_tag_seal(copy))
            return true;
    }
    return false;
}

static bool tag_in_range(const struct memnode_store *store, const struct memnode_tag *tag,
                         uint64_t unit)
{
    uint64_t span = tag->bytes / MEMNODE_STORE_UNIT;
    return tag->valid == memnode_tag_seal(tag) && tag->start_unit == unit && span > 0 &&
           tag->bytes % MEMNODE_STORE_UNIT == 0 && unit + span <= store->units;
}

/* Every tag is 0 (cleared) or sealed and in range; a torn store leaves a
 * sound tag whose bytes do not match, found when it is retrieved. */
static bool tags_sound(struct memnode_store *store, char *why, size_t why_bytes)
{
    for (uint64_t unit = 0; unit < store->units; unit++) {
        struct memnode_tag tag;
        bool whole = tag_snapshot(&store->tags[unit], &tag);
        if (whole && tag.valid == 0)
            continue;
        if (!whole || !tag_in_range(store, &tag, unit)) {
            snprintf(why, why_bytes, "NVM tag of unit %lu fails its checksum (corrupt)",
                     (unsigned long)unit);
            return false;
        }
        store->blocks_found++;
    }
    return true;
}

enum memnode_store_opened memnode_store_open(struct memnode_store *store, uint8_t *base,
                                             uint64_t device_bytes,
                                             const uint8_t cluster[MEMNODE_CLUSTER_BYTES],
                                             uint32_t node_id, char *why, size_t why_bytes)
{
    place(store, base, device_bytes);
    memcpy(store->cluster, cluster, MEMNODE_CLUSTER_BYTES);
    store->node_id = node_id;
    why[0] = 0;
    if (store->units == 0) {
        snprintf(why, why_bytes, "NVM of %lu bytes is too small", (unsigned long)device_bytes);
        return MEMNODE_STORE_CORRUPT;
    }
    if (blank(store)) {
        format(store);
        return MEMNODE_STORE_FORMATTED;
    }
    int newest = nvm_identity_pair_newest(store->headers, MEMNODE_STORE_MAGIC,
                                          MEMNODE_STORE_VERSION, device_bytes);
    if (newest < 0 || !geometry_matches(store, &store->headers[newest])) {
        snprintf(why, why_bytes,
                 "NVM header fails its checksum (corrupt, or not a memory "
                 "node's)");
        return MEMNODE_STORE_CORRUPT;
    }
    uint8_t identity[NVM_IDENTITY_BYTES];
    identity_of(cluster, node_id, identity);
    if (memcmp(store->headers[newest].identity, identity, MEMNODE_STORE_IDENTITY) != 0)
        return refuse_foreign(&store->headers[newest], store, why, why_bytes);
    if (!tags_sound(store, why, why_bytes))
        return MEMNODE_STORE_CORRUPT;
    struct nvm_identity body = store->headers[newest];
    int slot =
        nvm_identity_pair_update(store->headers, &body, MEMNODE_STORE_MAGIC, MEMNODE_STORE_VERSION);
    store->generation = store->headers[slot].generation;
    return MEMNODE_STORE_FOUND;
}

void memnode_store_write(struct memnode_store *store, uint64_t offset, const void *bytes,
                         size_t length)
{
    nvm_write(store->data + offset, bytes, length);
    nvm_flush(store->data + offset, length);
}

/* The data flushed before: one fence makes it durable; then the tag is
 * cleared, written and sealed, each persisted, so a sealed tag is whole. */
void memnode_store_commit_sum(struct memnode_store *store, uint64_t start_unit, uint32_t bytes,
                              uint32_t sequence, uint64_t sum)
{
    nvm_fence();
    struct memnode_tag *tag = &store->tags[start_unit];
    struct memnode_tag fresh = {
        .start_unit = start_unit, .bytes = bytes, .sequence = sequence, .kept_checksum = sum};
    nvm_store64_persist(&tag->valid, 0);
    nvm_write_persist(tag, &fresh, offsetof(struct memnode_tag, valid));
    nvm_store64_persist(&tag->valid, memnode_tag_seal(&fresh));
}

void memnode_store_commit(struct memnode_store *store, uint64_t start_unit, uint32_t bytes,
                          uint32_t sequence)
{
    memnode_store_commit_sum(store, start_unit, bytes, sequence,
                             kept_checksum(store->data + start_unit * MEMNODE_STORE_UNIT, bytes));
}

enum memnode_store_held memnode_store_check_copy(const struct memnode_store *store,
                                                 uint64_t start_unit, uint32_t bytes,
                                                 const void *copy)
{
    struct memnode_tag tag;
    if (start_unit >= store->units || !tag_snapshot(&store->tags[start_unit], &tag) ||
        tag.valid == 0 || !tag_in_range(store, &tag, start_unit) || tag.bytes != bytes)
        return MEMNODE_NOT_HELD;
    return kept_checksum(copy, bytes) == tag.kept_checksum ? MEMNODE_HELD : MEMNODE_TORN;
}

enum memnode_store_held memnode_store_check(const struct memnode_store *store, uint64_t start_unit,
                                            uint32_t bytes)
{
    if (start_unit >= store->units)
        return MEMNODE_NOT_HELD;
    return memnode_store_check_copy(store, start_unit, bytes,
                                    store->data + start_unit * MEMNODE_STORE_UNIT);
}

void memnode_store_layout(const struct memnode_store *store, struct memnode_layout *layout)
{
    *layout = (struct memnode_layout){.device_bytes = store->device_bytes,
                                      .tags_at = TAGS_AT,
                                      .data_at = data_offset(store->units),
                                      .units = store->units,
                                      .unit_bytes = MEMNODE_STORE_UNIT,
                                      .tag_bytes = TAG_BYTES};
}

bool memnode_store_view(struct memnode_store *store, uint8_t *base,
                        const struct memnode_layout *layout)
{
    place(store, base, layout->device_bytes);
    struct memnode_layout ours;
    memnode_store_layout(store, &ours);
    return store->units > 0 && memcmp(&ours, layout, sizeof ours) == 0;
}
