/* block_map_cache.c: a direct-mapped table of (inode, file block) -> disk
 * block and file size (block_map_cache.h). Holes are not remembered. */
#include "block_map_cache.h"
#include "ext2_public_map.h"
#include <formica/storage.h>

struct block_map_entry block_map_entries[BLOCK_MAP_ENTRIES];
static bool anything_remembered;

/* Asks the ext2 library and remembers the answer (block_map_cache.h). */
int block_map_cache_look_up(struct ext2_fs *fs, uint32_t inode, uint64_t first, uint32_t count,
                            uint32_t *disk_blocks, uint64_t *size)
{
    int error = ext2_file_blocks(fs, inode, first, count, disk_blocks, size);
    if (error != 0)
        return error;
    for (uint32_t i = 0; i < count; i++) {
        if (disk_blocks[i] == 0)
            continue;
        struct block_map_entry *entry = block_map_entry_for(inode, first + i);
        *entry = (struct block_map_entry){inode, disk_blocks[i], first + i, *size,
                                          BLOCK_MAP_JOURNAL_UNKNOWN};
        anything_remembered = true;
    }
    return 0;
}

void block_map_cache_clear(void)
{
    if (!anything_remembered)
        return;
    for (uint32_t i = 0; i < BLOCK_MAP_ENTRIES; i++)
        block_map_entries[i].inode = 0;
    anything_remembered = false;
}
