/* memnode_part.c: one of several client machines sharing memory nodes
 * (build/run --memnode-clients N gives machine J the boot option
 * memnode_part=J/N): its cluster keeps only the J-th Nth of each node's
 * blocks, so no two machines place a block in the same slot of a node. */
#include <formica/memnode_client.h>
#include <formica/user.h>
#include <stdio.h>

void memnode_cluster_keep_part(struct memnode_cluster *cluster)
{
    char text[16] = "";
    uint32_t part, parts;
    kernel_option(MEMNODE_PART_OPTION, text, sizeof text);
    if (text[0] == '\0')
        return;
    if (!memnode_part_parse(text, &part, &parts)) {
        printf("memnode client: %s=%s is not J/N (1 <= J <= N <= %d): every node's blocks used\n",
               MEMNODE_PART_OPTION, text, MEMNODE_PARTS_MAX);
        return;
    }
    uint64_t kept = 0;
    for (unsigned i = 0; i < cluster->node_count; i++) {
        cluster->nodes[i].blocks = memnode_placement_keep_part(&cluster->placement, i, part, parts);
        kept += cluster->nodes[i].blocks;
    }
    printf("memnode client: machine %u of %u: part %u/%u of every node, %lu blocks\n", part, parts,
           part, parts, (unsigned long)kept);
}
