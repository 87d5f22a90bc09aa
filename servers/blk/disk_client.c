/* disk_client.c: synchronous requests from BLK to DK (seed 003 §3.2: on a
 * miss BLK asks DK synchronously). One control ICA and two data ICAs are reused, one of
 * CACHE_MAX_RUN blocks for the usual transfer and one of TIER_RUN_BLOCKS (the tier's longest
 * write-back run, a long read-ahead) for longer ones: a data ICA's every page is mapped and
 * unmapped at each hop, so a short transfer moves a short one. Blocks are copied between it
 * and the cache. A disk whose size is not a multiple of 4 KiB (a 1 KiB-block file system of 4097
 * KiB) ends inside its last block: only its sectors are transferred, the rest of that block reads
 * as zeros and is never written. */
#include "disk_client.h"
#include "tier.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>
#include <string.h>

static long dk_pid;
static uint64_t control;
static uint64_t transfer_short, transfer_long; /* CACHE_MAX_RUN and TIER_RUN_BLOCKS blocks */
static uint64_t disk_sectors;                  /* the disk's size, from DK_INFO */
static uint8_t disk_serial[DISK_SERIAL_BYTES]; /* and its serial */

struct disk_transfer {
    uint32_t operation;
    uint64_t first_sector, sectors;
    uint64_t data; /* the data ICA it moves */
};

/* The data ICA for a transfer of `count` blocks. */
static uint64_t transfer_for(uint32_t count)
{
    return count <= CACHE_MAX_RUN ? transfer_short : transfer_long;
}

/* Fills the control ICA for one attempt (again after a DK restart: the data
 * ICA comes back with a request DK never answered). */
static long prepare_transfer(void *context)
{
    const struct disk_transfer *asked = context;
    request_prepare(control, asked->operation);
    struct ica_control *page = ica_control_of(control);
    if (asked->operation == DK_READ)
        *dk_read_of(page) = (struct dk_read_message){asked->first_sector, asked->sectors};
    else
        *dk_write_of(page) = (struct dk_write_message){asked->first_sector, asked->sectors};
    return request_attach(control, asked->data);
}

/* The sectors of blocks [first, first + count) that lie on the disk (the
 * cache asks only for blocks below cache_disk.blocks: at least one sector). */
static uint64_t sectors_on_disk(uint64_t first, uint32_t count)
{
    uint64_t start = first * STORAGE_SECTORS_PER_BLOCK;
    uint64_t wanted = (uint64_t)count * STORAGE_SECTORS_PER_BLOCK;
    return start + wanted <= disk_sectors ? wanted : disk_sectors - start;
}

/* Sector reads and writes may be repeated: a DK that ends is waited for.
 * Returns the bytes transferred (less than count blocks at the disk's end). */
static long transfer_blocks(uint32_t operation, uint64_t first, uint32_t count)
{
    struct disk_transfer asked = {operation, first * STORAGE_SECTORS_PER_BLOCK,
                                  sectors_on_disk(first, count), transfer_for(count)};
    long result = request_call_retrying(SERVER_NAME_DK, &dk_pid, control, prepare_transfer, &asked);
    return result < 0 ? result : (long)(asked.sectors * STORAGE_SECTOR_BYTES);
}

static int read_blocks(void *context, uint64_t first, uint32_t count, uint8_t *const *buffers)
{
    (void)context;
    long bytes = transfer_blocks(DK_READ, first, count);
    if (bytes < 0)
        return (int)bytes;
    uint8_t *data = ica_address(transfer_for(count));
    size_t wanted = (size_t)count * STORAGE_BLOCK_BYTES;
    if ((size_t)bytes < wanted)
        memset(data + bytes, 0, wanted - (size_t)bytes); /* past the disk's end */
    for (uint32_t i = 0; i < count; i++)
        memcpy(buffers[i], data + (size_t)i * STORAGE_BLOCK_BYTES, STORAGE_BLOCK_BYTES);
    return 0;
}

static int write_blocks(void *context, uint64_t first, uint32_t count,
                        const uint8_t *const *buffers)
{
    (void)context;
    uint8_t *data = ica_address(transfer_for(count));
    for (uint32_t i = 0; i < count; i++)
        memcpy(data + (size_t)i * STORAGE_BLOCK_BYTES, buffers[i], STORAGE_BLOCK_BYTES);
    long bytes = transfer_blocks(DK_WRITE, first, count);
    return bytes < 0 ? (int)bytes : 0;
}

static long prepare_flush(void *context)
{
    (void)context;
    request_prepare(control, DK_FLUSH);
    return 0;
}

/* A flush may be repeated too: one to a DK that ended (or was gone before
 * it, when BLK had nothing to read or write since its restart) goes to the
 * restarted one. */
static int flush_disk(void *context)
{
    (void)context;
    long result = request_call_retrying(SERVER_NAME_DK, &dk_pid, control, prepare_flush, NULL);
    return result < 0 ? (int)result : 0;
}

const uint8_t *disk_client_serial(void)
{
    return disk_serial;
}

uint64_t disk_client_bytes(void)
{
    return disk_sectors * STORAGE_SECTOR_BYTES;
}

int disk_client_open(struct cache_disk *disk)
{
    dk_pid = server_wait_for(SERVER_NAME_DK, SERVER_START_WAIT_MS);
    if (dk_pid < 0)
        return (int)dk_pid;
    long control_id = ica_allocate(ICA_KIND_CONTROL, 4096);
    long short_id = ica_allocate(ICA_KIND_DATA, CACHE_MAX_RUN * STORAGE_BLOCK_BYTES);
    long long_id = ica_allocate(ICA_KIND_DATA, TIER_RUN_BLOCKS * STORAGE_BLOCK_BYTES);
    long result = control_id < 0 ? control_id : short_id < 0 ? short_id : long_id < 0 ? long_id : 0;
    if (result == 0)
        result = request_operation(dk_pid, (uint64_t)control_id, DK_INFO);
    if (result < 0) { /* no disk: BLK will not use them (server_placeholder.h) */
        long ids[] = {control_id, short_id, long_id};
        for (uint32_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
            if (ids[i] >= 0)
                ica_free((uint64_t)ids[i]);
        return (int)result;
    }
    control = (uint64_t)control_id;
    transfer_short = (uint64_t)short_id;
    transfer_long = (uint64_t)long_id;
    disk->context = NULL;
    disk_sectors = dk_info_of(ica_control_of(control))->sectors;
    memcpy(disk_serial, ica_control_of(control)->payload, DISK_SERIAL_BYTES);
    disk->blocks = (disk_sectors + STORAGE_SECTORS_PER_BLOCK - 1) / STORAGE_SECTORS_PER_BLOCK;
    disk->read = read_blocks;
    disk->write = write_blocks;
    disk->flush = flush_disk;
    return 0;
}
