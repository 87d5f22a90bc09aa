/* block_map_cache.h: FS's memory of where files' blocks lie on the disk
 * (and the files' sizes), so a readblock of a block mapped before needs no
 * inode read and no walk of the block tree. Only requests that cannot move a
 * block or change a size keep it; every other request empties it first. */
#pragma once
#include "ext2.h"
#include <stdbool.h>
#include <stdint.h>

/* ext2_file_blocks (ext2_public_map.h), answered from memory when every block
 * asked for is remembered, else by the ext2 library (and remembered). */
int block_map_cache_file_blocks(struct ext2_fs *fs, uint32_t inode, uint64_t first, uint32_t count,
                                uint32_t *disk_blocks, uint64_t *size);
/* Forgets everything (before a request that may change a file's blocks). */
void block_map_cache_clear(void);
