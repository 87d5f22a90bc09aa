/* memnode_slots.c: the pager's slots over the memory nodes: the cluster's
 * placement (lib/memnode_protocol.c) seen from the client, with dead nodes
 * left out. No network here, so the host tests link it as it is. */
#include <formica/memnode_client.h>

int64_t memnode_slot_allocate(struct memnode_cluster *cluster)
{
    return memnode_placement_allocate(&cluster->placement);
}

int64_t memnode_slot_allocate_on(struct memnode_cluster *cluster, unsigned node)
{
    if (node >= cluster->node_count || cluster->nodes[node].dead)
        return -1;
    return memnode_placement_allocate_on(&cluster->placement, node);
}

void memnode_slot_free(struct memnode_cluster *cluster, uint64_t slot)
{
    memnode_placement_free(&cluster->placement, slot);
}

int memnode_slot_node(const struct memnode_cluster *cluster, uint64_t slot)
{
    unsigned index;
    uint64_t block;
    return memnode_placement_locate(&cluster->placement, slot, &index, &block) ? (int)index : -1;
}

uint64_t memnode_node_free_blocks(const struct memnode_cluster *cluster, unsigned node)
{
    return memnode_placement_free_on(&cluster->placement, node);
}
