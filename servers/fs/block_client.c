/* block_client.c: ext2 blocks over BLK's 4 KiB disk blocks. An ext2 block of
 * b bytes (1, 2 or 4 KiB) lies in disk block (k * b) / 4096 at offset
 * (k * b) % 4096; writing less than a disk block reads it first
 * (read-modify-write). FS owns one control ICA and one 4 KiB data ICA. */
#include "block_client.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <string.h>

#define BLK_WAIT_MS 10000

static long blk_pid = -E_NOT_FOUND;
static uint64_t control, data;

static int blk_transfer(uint32_t operation, uint64_t disk_block)
{
    request_prepare(control, operation);
    struct ica_control *page = ica_control_of(control);
    page->argument[0] = disk_block;
    page->argument[1] = 1;
    request_attach(control, data);
    long error = ica_request(blk_pid, control, ICA_SYNC);
    if (error == 0 && page->result < 0)
        error = page->result;
    return (int)error;
}

static void locate(const struct ext2_device *device, uint64_t block, uint64_t *disk_block,
                   uint32_t *offset)
{
    uint64_t byte = block * device->block_size;
    *disk_block = byte / STORAGE_BLOCK_BYTES;
    *offset = (uint32_t)(byte % STORAGE_BLOCK_BYTES);
}

static int read_block(void *context, uint64_t block, void *buffer)
{
    const struct ext2_device *device = context;
    uint64_t disk_block;
    uint32_t offset;
    locate(device, block, &disk_block, &offset);
    int error = blk_transfer(BLK_READ, disk_block);
    if (error == 0)
        memcpy(buffer, (const uint8_t *)ica_address(data) + offset, device->block_size);
    return error;
}

static int write_block(void *context, uint64_t block, const void *buffer)
{
    const struct ext2_device *device = context;
    uint64_t disk_block;
    uint32_t offset;
    locate(device, block, &disk_block, &offset);
    if (device->block_size < STORAGE_BLOCK_BYTES) {
        int error = blk_transfer(BLK_READ, disk_block);
        if (error != 0)
            return error;
    }
    memcpy((uint8_t *)ica_address(data) + offset, buffer, device->block_size);
    return blk_transfer(BLK_WRITE, disk_block);
}

int block_client_open(struct ext2_device *device, long *pid)
{
    blk_pid = server_wait_for(SERVER_NAME_BLK, BLK_WAIT_MS);
    *pid = blk_pid;
    if (blk_pid < 0)
        return (int)blk_pid;
    long control_id = ica_allocate(ICA_KIND_CONTROL, 4096);
    long data_id = ica_allocate(ICA_KIND_DATA, STORAGE_BLOCK_BYTES);
    if (control_id < 0 || data_id < 0)
        return (int)(control_id < 0 ? control_id : data_id);
    control = (uint64_t)control_id;
    data = (uint64_t)data_id;
    device->context = device;
    device->read_block = read_block;
    device->write_block = write_block;
    return 0;
}

long block_client_sync(void)
{
    if (blk_pid < 0)
        return -E_IO;
    return request_call(blk_pid, control, BLK_SYNC, 0);
}
