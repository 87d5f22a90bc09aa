/* backend_block.c: a raw block device as remote memory: the second
 * virtio-blk disk of the machine (DK keeps the first), which build/run's
 * --nbd attaches as a network block export (nbdkit's memory plugin on the
 * host, through QEMU's nbd: driver). Blocks are placed first-free in 4 KiB
 * units; each store or retrieve goes through a DMA buffer in 64 KiB requests. */
#include <formica/block_device.h>
#include "pager.h"
#include "promised_space.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_DEVICE_INDEX 1 /* the first virtio-blk is DK's disk */
#define CHUNK_BYTES (64u << 10)
#define MAX_CHUNKS (PAGER_BLOCK_MAX_BYTES / CHUNK_BYTES)

static struct {
    bool opened;
    bool interrupts; /* false: the line is DK's; completions are polled */
    struct block_device device;
    struct dma_region buffer;   /* PAGER_BLOCK_MAX_BYTES */
    struct promised_space room; /* first-free units, promised to the attached clients */
    uint64_t stores, retrieves;
} blockdev;

static long open_device(void)
{
    if (!virtio_blk_probe_at(&blockdev.device, BLOCK_DEVICE_INDEX, &blockdev.interrupts)) {
        printf("pager: no second virtio-blk disk for the block backend (build/run --nbd)\n");
        return -E_NOT_FOUND;
    }
    uint64_t units64 = blockdev.device.sectors * SECTOR_BYTES / PAGER_UNIT_BYTES;
    uint32_t units = units64 > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)units64;
    uint64_t *bits = calloc((units + 63) / 64 + 1, sizeof(uint64_t));
    long error =
        bits == NULL ? -E_NO_MEMORY : dma_allocate(PAGER_BLOCK_MAX_BYTES, &blockdev.buffer);
    if (error < 0) {
        printf("pager: block backend: %s\n", error_text(error));
        return error;
    }
    space_init(&blockdev.room.space, bits, units);
    blockdev.opened = true;
    printf("pager: block device of %lu MiB as remote memory (%s)\n",
           blockdev.device.sectors * SECTOR_BYTES >> 20,
           blockdev.interrupts ? "interrupts" : "polled");
    return 0;
}

static long block_fits(const struct client *client)
{
    long error = blockdev.opened ? 0 : open_device();
    return error != 0 ? error : promised_space_fits(&blockdev.room, client, "block device");
}

static uint64_t block_capacity_bytes(void)
{
    return (uint64_t)blockdev.room.space.units * PAGER_UNIT_BYTES;
}

static long block_attach(struct client *client)
{
    long error = blockdev.opened ? 0 : open_device();
    if (error != 0)
        return error;
    return promised_space_reserve(&blockdev.room, client, "block device");
}

/* Moves one block between the DMA buffer and the device, in chunks that are
 * all submitted at once; 0 or -E_IO. */
static long transfer(uint64_t unit, uint32_t bytes, bool write)
{
    struct block_request requests[MAX_CHUNKS];
    unsigned count = (bytes + CHUNK_BYTES - 1) / CHUNK_BYTES, next = 0;
    for (unsigned i = 0; i < count; i++) {
        uint32_t offset = i * CHUNK_BYTES, length = bytes - offset;
        requests[i] = (struct block_request){
            .lba = (unit * PAGER_UNIT_BYTES + offset) / SECTOR_BYTES,
            .sectors = (length < CHUNK_BYTES ? length : CHUNK_BYTES) / SECTOR_BYTES,
            .write = write,
            .physical = blockdev.buffer.physical + offset};
    }
    for (;;) {
        while (next < count && blockdev.device.submit(&blockdev.device, &requests[next]) == 0)
            next++;
        blockdev.device.complete(&blockdev.device);
        bool done = next == count;
        for (unsigned i = 0; i < next && done; i++)
            done = requests[i].done;
        if (done)
            break;
        if (blockdev.interrupts)
            irq_wait();
        else
            yield();
    }
    for (unsigned i = 0; i < count; i++)
        if (requests[i].status != 0)
            return -E_IO;
    return 0;
}

/* Copies the block out at once: the data ICA is freed and the store is complete. */
static long block_store(struct client *client, uint32_t block, uint64_t data_ica)
{
    if (promised_space_place(&blockdev.room, client, block) == PAGER_NO_SLOT)
        return -E_NO_SPACE;
    memcpy((void *)blockdev.buffer.address, (const void *)ica_address(data_ica),
           client->block_bytes);
    long result = transfer(client->slot[block], client->block_bytes, true);
    if (result != 0)
        printf("pager: block device: writing block %u of pid %u failed\n", block, client->pid);
    ica_free(data_ica);
    blockdev.stores++;
    store_completed(client, block, result);
    return 0;
}

static long block_retrieve(struct client *client, uint32_t block, uint64_t data_ica)
{
    long result = transfer(client->slot[block], client->block_bytes, false);
    if (result != 0) {
        printf("pager: block device: reading block %u of pid %u failed\n", block, client->pid);
        return result;
    }
    memcpy((void *)ica_address(data_ica), (const void *)blockdev.buffer.address,
           client->block_bytes);
    blockdev.retrieves++;
    return 0;
}

static long block_wait_one(void)
{
    return -E_NOT_FOUND; /* stores complete before block_store returns */
}

static void block_detach(struct client *client, bool keep_contents)
{
    (void)keep_contents; /* an NBD memory export does not outlive the run */
    promised_space_release(&blockdev.room, client);
}

/* A kept client after a pager restart: the export outlives the pager (it
 * lives on the host for the whole run), so the device is opened again as it
 * is, the client's placed blocks marked used and the rest of its region promised. */
static long block_reattach(struct client *client)
{
    long error = blockdev.opened ? 0 : open_device();
    return error != 0 ? error : promised_space_take_back(&blockdev.room, client);
}

const struct backend backend_block = {
    .name = "block",
    .kind = PAGER_BACKEND_BLOCK,
    .fits = block_fits,
    .capacity_bytes = block_capacity_bytes,
    .attach = block_attach,
    .store = block_store,
    .retrieve = block_retrieve,
    .wait_one = block_wait_one,
    .detach = block_detach,
    .reattach = block_reattach,
};
