/* block_client.c: ext2 blocks over BLK's 4 KiB disk blocks. An ext2 block of
 * b bytes (1, 2 or 4 KiB) lies in disk block (k * b) / 4096 at offset
 * (k * b) % 4096; writing less than a disk block reads it first
 * (read-modify-write). FS owns one control ICA and one 4 KiB data ICA.
 * FS keeps a small write-through copy of the disk blocks it used last
 * (inodes, directories, indirect blocks): every change to file-system
 * blocks goes through FS, so the copy is never stale, and a readblock does
 * not cost FS a round trip to BLK just to read the file's inode. Each
 * disk block goes to the BLK shard that owns it (formica/blk_shards.h). */
#include "block_client.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdbool.h>
#include <string.h>

struct blk_shards block_client_shards;
static uint64_t control, data;

struct recent_block block_client_recent[RECENT_BLOCKS];

/* Disk blocks FS must not copy (lent writable into a mapping: stores change
 * them behind FS), by block number modulo its bits: a collision only costs
 * a copy FS does not keep. */
#define NEVER_REMEMBERED_BITS 131072u
static uint64_t never_remembered[NEVER_REMEMBERED_BITS / 64];

static bool remembered_ever(uint64_t disk_block)
{
    uint64_t bit = disk_block % NEVER_REMEMBERED_BITS;
    return (never_remembered[bit / 64] & (1ull << (bit % 64))) == 0;
}

void block_client_never_remember(uint64_t disk_block)
{
    uint64_t bit = disk_block % NEVER_REMEMBERED_BITS;
    never_remembered[bit / 64] |= 1ull << (bit % 64);
    block_client_forget(disk_block);
}

/* Keeps a copy of the disk block, unless FS must not: false then. */
static bool remember(uint64_t disk_block, const uint8_t *bytes)
{
    if (!remembered_ever(disk_block))
        return false;
    struct recent_block *slot = block_client_recent_slot(disk_block);
    slot->valid = true;
    slot->disk_block = disk_block;
    memcpy(slot->bytes, bytes, STORAGE_BLOCK_BYTES);
    return true;
}

struct blk_transfer {
    uint32_t operation;
    uint64_t disk_block;
};

struct block_client_view block_client_view;

void block_client_view_set(uint64_t as_of)
{
    block_client_view.active = true;
    block_client_view.as_of = as_of;
    for (uint32_t i = 0; i < block_client_shards.count; i++)
        block_client_view.shards[i] = block_client_shards.pids[i];
}

/* Fills the control ICA for one attempt (again after a BLK restart: the
 * data ICA comes back with a request BLK never answered, bytes intact; a
 * replica's read keeps the view it had, which the new shard refuses). */
static long prepare_transfer(void *context)
{
    const struct blk_transfer *asked = context;
    request_prepare(control, asked->operation);
    struct ica_control *page = ica_control_of(control);
    if (asked->operation == BLK_READ) {
        *blk_read_of(page) =
            (struct blk_read_message){.first_block = asked->disk_block, .blocks = 1};
        block_client_view_stamp(blk_read_of(page), block_client_shard_of(asked->disk_block));
    } else
        *blk_write_of(page) =
            (struct blk_write_message){.first_block = asked->disk_block, .blocks = 1};
    return request_attach(control, data);
}

/* Block reads and writes may be repeated: a shard that ends is waited for. */
static int blk_transfer(uint32_t operation, uint64_t disk_block)
{
    struct blk_transfer asked = {operation, disk_block};
    long result = blk_shards_call(&block_client_shards, block_client_shard_of(disk_block), control,
                                  prepare_transfer, &asked);
    return result < 0 ? (int)result : 0;
}

long block_client_reconnect(uint32_t shard, long gone)
{
    return blk_shards_reconnect(&block_client_shards, shard, gone);
}

struct blk_retirement {
    const uint32_t *blocks;
    uint32_t count, flags;
    uint64_t sequence;
};

static long prepare_retire(void *context)
{
    const struct blk_retirement *asked = context;
    request_prepare(control, BLK_RETIRE);
    struct ica_control *page = ica_control_of(control);
    *blk_retire_of(page) = (struct blk_retire_message){
        .sequence = asked->sequence, .blocks = asked->count, .flags = asked->flags};
    if (asked->count > 0)
        memcpy(page->payload, asked->blocks, asked->count * sizeof(uint32_t));
    return 0;
}

long block_client_retire(uint32_t shard, const uint32_t *blocks, uint32_t count, uint64_t sequence,
                         uint32_t flags)
{
    struct blk_retirement asked = {blocks, count, flags, sequence};
    return blk_shards_call(&block_client_shards, shard, control, prepare_retire, &asked);
}

static void locate(const struct ext2_device *device, uint64_t block, uint64_t *disk_block,
                   uint32_t *offset)
{
    uint64_t byte = block * device->block_size;
    *disk_block = byte / STORAGE_BLOCK_BYTES;
    *offset = (uint32_t)(byte % STORAGE_BLOCK_BYTES);
}

/* The whole disk block, from the recent copies or from BLK; NULL on error. */
static const uint8_t *disk_block_bytes(uint64_t disk_block, int *error)
{
    struct recent_block *slot = block_client_recent_slot(disk_block);
    if (slot->valid && slot->disk_block == disk_block)
        return slot->bytes;
    *error = blk_transfer(BLK_READ, disk_block);
    if (*error != 0)
        return NULL;
    if (!remember(disk_block, ica_address(data)))
        return ica_address(data); /* a block FS keeps no copy of: BLK's answer itself */
    return slot->bytes;
}

/* Copies only the bytes asked for (an inode, a pointer), not the whole block. */
static int read_bytes(void *context, uint64_t block, uint32_t within, void *buffer, uint32_t length)
{
    const struct ext2_device *device = context;
    uint64_t disk_block;
    uint32_t offset;
    int error = 0;
    locate(device, block, &disk_block, &offset);
    const uint8_t *bytes = disk_block_bytes(disk_block, &error);
    if (bytes != NULL)
        memcpy(buffer, bytes + offset + within, length);
    return error;
}

static int write_block(void *context, uint64_t block, const void *buffer)
{
    const struct ext2_device *device = context;
    uint64_t disk_block;
    uint32_t offset;
    locate(device, block, &disk_block, &offset);
    if (device->block_size < STORAGE_BLOCK_BYTES) {
        int error = 0;
        const uint8_t *bytes = disk_block_bytes(disk_block, &error);
        if (bytes == NULL)
            return error;
        if (bytes != ica_address(data))
            memcpy(ica_address(data), bytes, STORAGE_BLOCK_BYTES);
    }
    memcpy((uint8_t *)ica_address(data) + offset, buffer, device->block_size);
    int error = blk_transfer(BLK_WRITE, disk_block);
    if (error == 0)
        remember(disk_block, ica_address(data));
    else
        block_client_recent_slot(disk_block)->valid = false;
    return error;
}

void block_client_forget(uint64_t disk_block)
{
    struct recent_block *slot = block_client_recent_slot(disk_block);
    if (slot->disk_block == disk_block)
        slot->valid = false;
}

void block_client_forget_all(void)
{
    for (uint32_t i = 0; i < RECENT_BLOCKS; i++)
        block_client_recent[i].valid = false;
}

int block_client_read_uncached(const struct ext2_device *device, uint64_t block, uint32_t within,
                               void *buffer, uint32_t length)
{
    uint64_t disk_block;
    uint32_t offset;
    locate(device, block, &disk_block, &offset);
    int error = blk_transfer(BLK_READ, disk_block);
    if (error == 0)
        memcpy(buffer, (const uint8_t *)ica_address(data) + offset + within, length);
    return error;
}

int block_client_open(struct ext2_device *device)
{
    long error = blk_shards_open(&block_client_shards, SERVER_START_WAIT_MS);
    if (error != 0)
        return (int)error;
    long control_id = ica_allocate(ICA_KIND_CONTROL, 4096);
    long data_id = ica_allocate(ICA_KIND_DATA, STORAGE_BLOCK_BYTES);
    if (control_id < 0 || data_id < 0)
        return (int)(control_id < 0 ? control_id : data_id);
    control = (uint64_t)control_id;
    data = (uint64_t)data_id;
    uint64_t disk_bytes = 0;
    error = blk_shards_disk_bytes(&block_client_shards, control, &disk_bytes);
    if (error != 0)
        return (int)error;
    device->size_bytes = disk_bytes;
    device->context = device;
    device->read_bytes = read_bytes;
    device->write_block = write_block;
    return 0;
}

long block_client_sync(void)
{
    if (block_client_shards.count == 0 || block_client_shards.pids[0] < 0)
        return -E_IO; /* not open */
    return blk_shards_sync(&block_client_shards, control);
}
