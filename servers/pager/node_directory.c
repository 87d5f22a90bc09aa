/* node_directory.c: stable numbers for memory nodes (their node ids in the
 * order first met), so replica copies are named independently of the order
 * of a negotiation's nodes; the numbers live in the pager's kept region. */
#include "node_directory.h"
#include <stdio.h>

static struct node_directory private_directory;
static struct node_directory *directory = &private_directory;
static int cluster_index[MEMNODE_MAX_NODES];  /* per directory number; -1: not negotiated */
static uint32_t number_of[MEMNODE_MAX_NODES]; /* per cluster index */

void node_directory_open(struct node_directory *kept, bool fresh)
{
    directory = kept != NULL ? kept : &private_directory;
    if (fresh || directory->count > MEMNODE_MAX_NODES)
        directory->count = 0;
}

uint32_t node_directory_known(void)
{
    return directory->count;
}

static int number_of_id(uint32_t id)
{
    for (uint32_t number = 0; number < directory->count; number++)
        if (directory->ids[number] == id)
            return (int)number;
    return -1;
}

bool node_directory_learn(const struct memnode_cluster *cluster)
{
    bool all_named = true;
    for (unsigned number = 0; number < MEMNODE_MAX_NODES; number++)
        cluster_index[number] = -1;
    for (unsigned index = 0; index < cluster->node_count; index++) {
        uint32_t id = cluster->nodes[index].node_id;
        int number = number_of_id(id);
        if (number < 0 && directory->count < MEMNODE_MAX_NODES) {
            directory->ids[directory->count] = id;
            __atomic_store_n(&directory->count, directory->count + 1, __ATOMIC_RELEASE);
            number = (int)directory->count - 1;
        }
        if (number < 0) {
            printf("pager: memory node %u cannot be named: %u node ids known already\n", id,
                   MEMNODE_MAX_NODES);
            number_of[index] = NODE_COPY_NONE;
            all_named = false;
            continue;
        }
        number_of[index] = (uint32_t)number;
        cluster_index[number] = (int)index;
    }
    return all_named;
}

uint32_t node_directory_copy(const struct memnode_cluster *cluster, uint64_t slot)
{
    unsigned index;
    uint64_t block;
    if (!memnode_placement_locate(&cluster->placement, slot, &index, &block) ||
        number_of[index] == NODE_COPY_NONE || block >= (1u << NODE_COPY_BLOCK_BITS) - 1)
        return NODE_COPY_NONE;
    return number_of[index] << NODE_COPY_BLOCK_BITS | (uint32_t)block;
}

int64_t node_directory_slot(const struct memnode_cluster *cluster, uint32_t copy)
{
    if (copy == NODE_COPY_NONE)
        return -1;
    uint32_t number = copy >> NODE_COPY_BLOCK_BITS;
    if (number >= directory->count || cluster_index[number] < 0)
        return -1;
    uint64_t block = copy & ((1u << NODE_COPY_BLOCK_BITS) - 1);
    return memnode_placement_slot(&cluster->placement, (unsigned)cluster_index[number], block);
}

uint32_t node_directory_id(uint32_t copy)
{
    uint32_t number = copy >> NODE_COPY_BLOCK_BITS;
    return number < directory->count ? directory->ids[number] : 0;
}
