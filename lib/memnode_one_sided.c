/* memnode_one_sided.c: one-sided stores and retrieves into a memory node's
 * NVM store seen through ivshmem (formica/memnode_one_sided.h): the check
 * of the mapped store against the negotiation, block arithmetic, and the
 * node's own ordered store and check (lib/memnode_store.c) run here. */
#include <formica/errors.h>
#include <formica/kept_region.h>
#include <formica/memnode_one_sided.h>
#include <formica/nvm_persist.h>
#include <stdio.h>
#include <string.h>

static const struct nvm_identity *newest_header(const struct memnode_one_sided *side)
{
    int newest = nvm_identity_pair_newest(side->store.headers, MEMNODE_STORE_MAGIC,
                                          MEMNODE_STORE_VERSION, side->store.device_bytes);
    return newest < 0 ? NULL : &side->store.headers[newest];
}

static bool identity_is(const struct nvm_identity *header,
                        const uint8_t cluster[MEMNODE_CLUSTER_BYTES], uint32_t node_id)
{
    uint32_t theirs;
    memcpy(&theirs, header->identity + MEMNODE_CLUSTER_BYTES, sizeof theirs);
    return memcmp(header->identity, cluster, MEMNODE_CLUSTER_BYTES) == 0 && theirs == node_id;
}

/* The header's geometry against the layout (the node wrote both). */
static bool geometry_is(const struct nvm_identity *header, const struct memnode_layout *layout)
{
    return header->geometry[0] == layout->tags_at && header->geometry[1] == layout->units &&
           header->geometry[2] == layout->data_at && header->geometry[3] == layout->unit_bytes;
}

static bool refuse(char *why, size_t why_bytes, const char *reason)
{
    snprintf(why, why_bytes, "%s", reason);
    return false;
}

bool memnode_one_sided_open(struct memnode_one_sided *side, uint8_t *base, uint64_t bar_bytes,
                            const struct memnode_layout *layout,
                            const struct memnode_capacity *capacity, char *why, size_t why_bytes)
{
    memset(side, 0, sizeof(*side));
    why[0] = 0;
    if (layout->device_bytes == 0 || layout->device_bytes > bar_bytes)
        return refuse(why, why_bytes, "the store is larger than the BAR (another node's file?)");
    if (!memnode_store_view(&side->store, base, layout))
        return refuse(why, why_bytes, "the negotiated layout is not this build's store format");
    side->bar_bytes = bar_bytes;
    memcpy(side->cluster, capacity->cluster, MEMNODE_CLUSTER_BYTES);
    side->node_id = capacity->node_id;
    const struct nvm_identity *header = newest_header(side);
    if (header == NULL)
        return refuse(why, why_bytes, "no valid FORMNODE header in the BAR");
    if (!identity_is(header, capacity->cluster, capacity->node_id))
        return refuse(why, why_bytes, "the BAR holds another cluster's or node's store");
    if (!geometry_is(header, layout))
        return refuse(why, why_bytes, "the BAR's header does not match the negotiated layout");
    if (header->generation != capacity->generation)
        return refuse(why, why_bytes, "the BAR's generation is not the negotiated one");
    uint64_t held = side->store.units * MEMNODE_STORE_UNIT;
    side->limit_bytes = capacity->capacity_bytes < held ? capacity->capacity_bytes : held;
    side->store.generation = header->generation;
    side->on = true;
    return true;
}

uint64_t memnode_one_sided_generation(const struct memnode_one_sided *side)
{
    const struct nvm_identity *header = newest_header(side);
    if (header == NULL || !identity_is(header, side->cluster, side->node_id))
        return 0;
    return header->generation;
}

long memnode_one_sided_locate(const struct memnode_one_sided *side, uint64_t block, uint32_t bytes,
                              uint64_t *start_unit)
{
    if (bytes == 0 || bytes % MEMNODE_STORE_UNIT != 0)
        return -E_INVALID;
    uint64_t blocks = side->limit_bytes / bytes;
    if (block >= blocks)
        return -E_INVALID;
    *start_unit = block * (bytes / MEMNODE_STORE_UNIT);
    return 0;
}

long memnode_one_sided_store(struct memnode_one_sided *side, uint64_t block, uint32_t bytes,
                             const void *data, uint32_t sequence)
{
    uint64_t start_unit;
    long error = memnode_one_sided_locate(side, block, bytes, &start_unit);
    if (error != 0)
        return error;
    memnode_store_write(&side->store, start_unit * MEMNODE_STORE_UNIT, data, bytes);
    memnode_store_commit_sum(&side->store, start_unit, bytes, sequence, kept_checksum(data, bytes));
    side->stores++;
    return 0;
}

enum memnode_store_held memnode_one_sided_retrieve(struct memnode_one_sided *side, uint64_t block,
                                                   uint32_t bytes, void *data)
{
    uint64_t start_unit;
    if (memnode_one_sided_locate(side, block, bytes, &start_unit) != 0)
        return MEMNODE_NOT_HELD;
    memcpy(data, side->store.data + start_unit * MEMNODE_STORE_UNIT, bytes);
    enum memnode_store_held held = memnode_store_check_copy(&side->store, start_unit, bytes, data);
    if (held == MEMNODE_HELD)
        side->retrieves++;
    else
        side->corrupt++;
    return held;
}
