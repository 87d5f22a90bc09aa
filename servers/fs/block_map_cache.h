/* block_map_cache.h: FS's memory of where files' blocks lie on the disk
 * (and the files' sizes), so a readblock of a block mapped before needs no
 * inode read and no walk of the block tree. Only requests that cannot move a
 * block or change a size keep it; every other request empties it first. */
#pragma once
#include "ext2.h"
#include <stdbool.h>
#include <stdint.h>

/* The table: direct-mapped, (inode, file block) -> disk block and file
 * size. Holes are not remembered. */
#define BLOCK_MAP_ENTRIES 1024u
#define BLOCK_MAP_JOURNAL_UNKNOWN UINT64_MAX
struct block_map_entry {
    uint32_t inode; /* 0: empty */
    uint32_t disk_block;
    uint64_t block;
    uint64_t size;
    /* The ext3 journal's change count when disk_block was last found
     * outside its running transaction (fs_journal_holds_remembered),
     * BLOCK_MAP_JOURNAL_UNKNOWN if not since the entry was filled. */
    uint64_t outside_journal;
};
extern struct block_map_entry block_map_entries[BLOCK_MAP_ENTRIES];
static inline struct block_map_entry *block_map_entry_for(uint32_t inode, uint64_t block)
{
    return &block_map_entries[(block + (uint64_t)inode * 2654435761u) % BLOCK_MAP_ENTRIES];
}
/* The entry that remembers block `block` of `inode`, or NULL. Inline: a
 * readblock and a small write ask. */
static inline struct block_map_entry *block_map_cache_find(uint32_t inode, uint64_t block)
{
    struct block_map_entry *entry = block_map_entry_for(inode, block);
    if (inode == 0 || entry->inode != inode || entry->block != block)
        return NULL;
    return entry;
}
/* ext2_file_blocks (ext2_public_map.h) by the ext2 library, the answer
 * remembered: where block_map_cache_recall does not know every block (its
 * callers ask apart, so a recalled mapping saves no registers). */
int block_map_cache_look_up(struct ext2_fs *fs, uint32_t inode, uint64_t first, uint32_t count,
                            uint32_t *disk_blocks, uint64_t *size);
/* The remembered mappings of blocks first..first+count-1 of `inode` into
 * disk_blocks, and the file's size: the entry of the last block when every
 * one is remembered (for one block, its entry), else NULL. */
static inline struct block_map_entry *block_map_cache_recall(uint32_t inode, uint64_t first,
                                                             uint32_t count, uint32_t *disk_blocks,
                                                             uint64_t *size)
{
    struct block_map_entry *entry = NULL;
    for (uint32_t i = 0; i < count; i++) {
        entry = block_map_cache_find(inode, first + i);
        if (entry == NULL)
            return NULL;
        disk_blocks[i] = entry->disk_block;
        *size = entry->size;
    }
    return entry;
}
/* Forgets everything (before a request that may change a file's blocks). */
void block_map_cache_clear(void);
