/* readblock.c: FS_READBLOCK, the first stage of seed 003's readblock. FS maps
 * the file's blocks to disk blocks, rewrites the control ICA into a BLK_READ
 * for the serve loop to forward to BLK without ICA_RETURN_VIA_ME: BLK's result goes
 * straight back to the application (direct return). Holes, the file's end
 * and file systems of other block sizes are answered here, as FS_READ. */
#include "fs_server.h"
#include "block_map_cache.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>
#include <string.h>

static uint32_t disk_blocks[STORAGE_MAX_BLOCKS];

/* Answers like FS_READ of the whole range; the rest of the ICA is zeroed. */
static long read_here(struct fs_server *server, struct ica_control *page, uint64_t bytes)
{
    uint8_t *data = ica_address(page->data[0]);
    long result = ext2_read(&server->fs, (uint32_t)page->argument[0],
                            page->argument[1] * STORAGE_BLOCK_BYTES, data, bytes);
    if (result >= 0 && (uint64_t)result < bytes)
        memset(data + result, 0, bytes - (uint64_t)result);
    return result;
}

static bool consecutive(uint32_t count)
{
    for (uint32_t i = 1; i < count; i++)
        if (disk_blocks[i] != disk_blocks[0] + i)
            return false;
    return true;
}

static bool has_hole(uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (disk_blocks[i] == 0)
            return true;
    return false;
}

/* The control ICA becomes a BLK_READ of the mapped blocks; the serve loop
 * forwards it (without ICA_RETURN_VIA_ME) and receives in one call. */
static long prepare_for_blk(uint64_t control, uint32_t count)
{
    struct ica_control *page = ica_control_of(control);
    page->operation = BLK_READ;
    page->argument[0] = disk_blocks[0];
    page->argument[1] = count;
    page->argument[2] = count <= ICA_MAX_ATTACHED ? BLK_LEND : 0; /* zero copy when it fits */
    if (!consecutive(count)) {
        page->argument[2] |= BLK_BLOCK_LIST;
        memcpy(page->payload, disk_blocks, count * sizeof(uint32_t));
    }
    return FS_FORWARDED;
}

long fs_readblock(struct fs_server *server, uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    uint64_t first = page->argument[1], count = page->argument[2];
    if (count == 0 || count > STORAGE_MAX_BLOCKS)
        return fs_refuse(page, "readblock count out of range");
    uint64_t bytes = count * STORAGE_BLOCK_BYTES;
    bool lend_only = page->data_count == 0 && count <= ICA_MAX_ATTACHED;
    if (!lend_only && !fs_data_fits(page, bytes))
        return -E_INVALID;
    if (server->fs.block_size != STORAGE_BLOCK_BYTES)
        return lend_only ? -E_NEEDS_DATA : read_here(server, page, bytes);
    uint64_t size = 0;
    int error = block_map_cache_file_blocks(&server->fs, (uint32_t)page->argument[0], first,
                                            (uint32_t)count, disk_blocks, &size);
    if (error != 0)
        return error;
    if (first * STORAGE_BLOCK_BYTES >= size)
        return 0;
    if ((first + count) * STORAGE_BLOCK_BYTES > size || has_hole((uint32_t)count))
        return lend_only ? -E_NEEDS_DATA : read_here(server, page, bytes);
    return prepare_for_blk(control, (uint32_t)count);
}
