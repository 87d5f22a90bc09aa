/* blk_stripes.c: the routing of formica/blk_stripes.h that is not inline:
 * whether one BLK shard owns every block of a block list. */
#include <formica/blk_stripes.h>

bool blk_shard_of_list(const uint32_t *blocks, uint32_t count, uint32_t shards, uint32_t *shard)
{
    uint32_t first = blk_shard_of(blocks[0], shards);
    *shard = first;
    for (uint32_t i = 1; i < count && shards > 1; i++)
        if (blk_shard_of(blocks[i], shards) != first)
            return false;
    return true;
}
