/* block_map_cache.c: a direct-mapped table of (inode, file block) -> disk
 * block and file size (block_map_cache.h). Holes are not remembered. */
#include "block_map_cache.h"
#include "ext2_public_map.h"
#include <formica/storage.h>

#define MAP_ENTRIES 1024u

struct map_entry {
    uint32_t inode; /* 0: empty */
    uint32_t disk_block;
    uint64_t block;
    uint64_t size;
};

static struct map_entry entries[MAP_ENTRIES];
static bool anything_remembered;

static struct map_entry *entry_for(uint32_t inode, uint64_t block)
{
    return &entries[(block + (uint64_t)inode * 2654435761u) % MAP_ENTRIES];
}

static bool recall(uint32_t inode, uint64_t first, uint32_t count, uint32_t *disk_blocks,
                   uint64_t *size)
{
    for (uint32_t i = 0; i < count; i++) {
        const struct map_entry *entry = entry_for(inode, first + i);
        if (entry->inode != inode || entry->block != first + i)
            return false;
        disk_blocks[i] = entry->disk_block;
        *size = entry->size;
    }
    return count > 0;
}

/* Asks the ext2 library and remembers the answer (apart, so a recalled
 * mapping saves no registers). */
static __attribute__((noinline)) int look_up(struct ext2_fs *fs, uint32_t inode, uint64_t first,
                                             uint32_t count, uint32_t *disk_blocks, uint64_t *size)
{
    int error = ext2_file_blocks(fs, inode, first, count, disk_blocks, size);
    if (error != 0)
        return error;
    for (uint32_t i = 0; i < count; i++) {
        if (disk_blocks[i] == 0)
            continue;
        struct map_entry *entry = entry_for(inode, first + i);
        *entry = (struct map_entry){inode, disk_blocks[i], first + i, *size};
        anything_remembered = true;
    }
    return 0;
}

int block_map_cache_file_blocks(struct ext2_fs *fs, uint32_t inode, uint64_t first, uint32_t count,
                                uint32_t *disk_blocks, uint64_t *size)
{
    if (inode != 0 && recall(inode, first, count, disk_blocks, size))
        return 0;
    return look_up(fs, inode, first, count, disk_blocks, size);
}

void block_map_cache_clear(void)
{
    if (!anything_remembered)
        return;
    for (uint32_t i = 0; i < MAP_ENTRIES; i++)
        entries[i].inode = 0;
    anything_remembered = false;
}
