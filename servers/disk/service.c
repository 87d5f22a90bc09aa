/* service.c: DK's ICA front-end. Each DK_READ/DK_WRITE is split into chunks
 * that go to the driver together (several outstanding); data moves between
 * DK's DMA buffer and the requester's data ICA with one copy. DK_FLUSH
 * empties the disk's write cache (a barrier for BLK_SYNC). */
#include "service.h"
#include "requester_core.h"
#include <formica/data_ica.h>
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/protocol/dk_dispatch.h>
#include <formica/refusal_log.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define DMA_BUFFER_BYTES ICA_DATA_MAX_BYTES
#define CHUNK_SECTORS 128u /* 64 KiB per driver request */
#define MAX_CHUNKS (DMA_BUFFER_BYTES / SECTOR_BYTES / CHUNK_SECTORS)

static struct dma_region dma_buffer;

/* -E_INVALID unless the sectors lie on the disk and fit the data ICA. */
static long check_transfer(const struct block_device *device, const struct ica_control *page,
                           uint64_t first, uint64_t sectors)
{
    if (page->data_count < 1 || sectors == 0 || sectors > DMA_BUFFER_BYTES / SECTOR_BYTES)
        return -E_INVALID;
    if (first >= device->sectors || sectors > device->sectors - first)
        return -E_INVALID;
    if (!data_ica_holds(page, 0, sectors * SECTOR_BYTES))
        return -E_INVALID;
    return 0;
}

/* Moves `sectors` from `first` between the disk and the DMA buffer. */
static long run_chunks(struct block_device *device, uint64_t first, uint64_t sectors, bool write,
                       uint32_t core)
{
    struct block_request requests[MAX_CHUNKS];
    unsigned count = 0;
    for (uint64_t done = 0; done < sectors; done += CHUNK_SECTORS, count++) {
        uint64_t left = sectors - done;
        memset(&requests[count], 0, sizeof(requests[count]));
        requests[count].lba = first + done;
        requests[count].sectors = left < CHUNK_SECTORS ? (uint32_t)left : CHUNK_SECTORS;
        requests[count].write = write;
        requests[count].core = core;
        requests[count].physical = dma_buffer.physical + done * SECTOR_BYTES;
    }
    return block_run(device, requests, count);
}

static long transfer(struct block_device *device, uint64_t control, uint64_t first,
                     uint64_t sectors, bool write)
{
    struct ica_control *page = ica_control_of(control);
    const char *what = write ? "write" : "read";
    long error = check_transfer(device, page, first, sectors);
    if (error != 0) {
        refusal_log("dk", page->sender_account,
                    "dk: %s of %lu sectors at %lu refused (outside the disk or the data ICA)\n",
                    what, sectors, first);
        return error;
    }
    uint64_t bytes = sectors * SECTOR_BYTES;
    void *data = ica_address(page->data[0]);
    if (write)
        memcpy((void *)dma_buffer.address, data, bytes);
    error = run_chunks(device, first, sectors, write, requester_core(page->sender));
    if (error != 0) {
        printf("dk: %s of %lu sectors at %lu failed: %s\n", what, sectors, first,
               error_text(error));
        return error;
    }
    if (!write)
        memcpy(data, (const void *)dma_buffer.address, bytes);
    return (long)bytes;
}

long dk_read(struct block_device *device, uint64_t control, struct dk_read_message *message)
{
    return transfer(device, control, message->first_sector, message->sectors, false);
}

long dk_write(struct block_device *device, uint64_t control, struct dk_write_message *message)
{
    return transfer(device, control, message->first_sector, message->sectors, true);
}

long dk_info(struct block_device *device, uint64_t control, struct dk_info_message *message)
{
    message->sectors = device->sectors;
    message->sector_bytes = SECTOR_BYTES;
    memcpy(ica_control_of(control)->payload, device->serial, BLOCK_DEVICE_SERIAL_BYTES);
    return 0;
}

long dk_flush(struct block_device *device, uint64_t control, struct dk_flush_message *message)
{
    (void)message;
    long error = block_flush(device, requester_core(ica_control_of(control)->sender));
    if (error != 0)
        printf("dk: cache flush failed: %s\n", error_text(error));
    return error;
}

static void answer(struct block_device *device, uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    page->result = dk_dispatch(device, control);
    long error = ica_return(control);
    if (error != 0)
        printf("dk: return failed: %s\n", error_text(error));
}

_Noreturn void disk_serve(struct block_device *device)
{
    long error = dma_allocate(DMA_BUFFER_BYTES, &dma_buffer);
    if (error == 0)
        error = server_register(SERVER_NAME_DK);
    if (error != 0) {
        printf("dk: cannot serve requests: %s\n", error_text(error));
        exit(1);
    }
    for (;;) {
        long control = ica_receive(0);
        if (control < 0) {
            printf("dk: receive failed: %s\n", error_text(control));
            exit(1);
        }
        answer(device, (uint64_t)control);
    }
}
