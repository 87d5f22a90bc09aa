/* selftest.c: the DK self-test. Reads go out as 16 requests at once; the
 * pattern (byte i of sector L is (L * 31 + i * 7 + 0x5a) mod 256) lets the
 * host check the image file after the run. */
#include "selftest.h"
#include "crc32.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define READ_CHUNK_SECTORS 128
#define READ_BUFFER_SECTORS 2048
#define PATTERN_SECTORS 32
#define PATTERN_CHUNK_SECTORS 8

static uint8_t pattern_byte(uint64_t lba, unsigned offset)
{
    return (uint8_t)(lba * 31 + offset * 7 + 0x5a);
}

static void set_request(struct block_request *request, uint64_t lba, uint32_t sectors, bool write,
                        uint64_t physical)
{
    memset(request, 0, sizeof(*request));
    request->core = (uint32_t)core_id();
    request->lba = lba;
    request->sectors = sectors;
    request->write = write;
    request->physical = physical;
}

/* Reads `sectors` from LBA 0 in chunks all outstanding together; CRC in *crc. */
static long read_start(struct block_device *device, const struct dma_region *buffer,
                       uint64_t sectors, uint32_t *crc)
{
    struct block_request requests[READ_BUFFER_SECTORS / READ_CHUNK_SECTORS];
    unsigned count = 0;
    for (uint64_t lba = 0; lba < sectors; lba += READ_CHUNK_SECTORS, count++) {
        uint64_t left = sectors - lba;
        set_request(&requests[count], lba, left < READ_CHUNK_SECTORS ? left : READ_CHUNK_SECTORS,
                    false, buffer->physical + lba * SECTOR_BYTES);
    }
    long result = block_run(device, requests, count);
    *crc = crc32_update(0, (const void *)buffer->address, sectors * SECTOR_BYTES);
    return result;
}

/* Writes the pattern in chunks, reads it back in one request, compares. */
static bool pattern_round_trip(struct block_device *device, const struct dma_region *buffer,
                               uint64_t first)
{
    uint8_t *bytes = (uint8_t *)buffer->address;
    uint64_t half = PATTERN_SECTORS * SECTOR_BYTES;
    for (uint64_t i = 0; i < half; i++)
        bytes[i] = pattern_byte(first + i / SECTOR_BYTES, (unsigned)(i % SECTOR_BYTES));
    struct block_request requests[PATTERN_SECTORS / PATTERN_CHUNK_SECTORS];
    for (unsigned i = 0; i < PATTERN_SECTORS / PATTERN_CHUNK_SECTORS; i++)
        set_request(&requests[i], first + i * PATTERN_CHUNK_SECTORS, PATTERN_CHUNK_SECTORS, true,
                    buffer->physical + i * PATTERN_CHUNK_SECTORS * SECTOR_BYTES);
    if (block_run(device, requests, PATTERN_SECTORS / PATTERN_CHUNK_SECTORS) != 0)
        return false;
    memset(bytes + half, 0, half);
    set_request(&requests[0], first, PATTERN_SECTORS, false, buffer->physical + half);
    if (block_run(device, requests, 1) != 0)
        return false;
    return memcmp(bytes, bytes + half, half) == 0;
}

/* A flush after the pattern writes: reaches NVMe's volatile cache, is done
 * at once on the drivers that report none. */
static long flush(struct block_device *device)
{
    struct block_request request;
    set_request(&request, 0, 0, false, 0);
    request.flush = true;
    return block_run(device, &request, 1);
}

static long beyond_end(struct block_device *device, const struct dma_region *buffer, bool checked)
{
    struct block_request request;
    set_request(&request, device->sectors + (checked ? 0 : 8), 1, false, buffer->physical);
    return checked ? block_run(device, &request, 1) : block_run_unchecked(device, &request, 1);
}

int disk_selftest(struct block_device *device, uint64_t sectors_to_read)
{
    struct dma_region buffer, scratch;
    if (sectors_to_read > READ_BUFFER_SECTORS)
        sectors_to_read = READ_BUFFER_SECTORS;
    if (sectors_to_read > device->sectors)
        sectors_to_read = device->sectors;
    if (dma_allocate(READ_BUFFER_SECTORS * SECTOR_BYTES, &buffer) < 0 ||
        dma_allocate(2 * PATTERN_SECTORS * SECTOR_BYTES, &scratch) < 0) {
        printf("dk: no DMA memory for the self-test\n");
        return 1;
    }
    uint32_t crc = 0;
    long read_result = read_start(device, &buffer, sectors_to_read, &crc);
    uint64_t pattern_lba =
        device->sectors >= 4 * PATTERN_SECTORS ? device->sectors - 2 * PATTERN_SECTORS : 0;
    bool pattern_ok = pattern_lba > 0 && pattern_round_trip(device, &scratch, pattern_lba);
    long flushed = flush(device);
    long refused = beyond_end(device, &scratch, true);
    long device_error = beyond_end(device, &scratch, false);
    bool ok = read_result == 0 && pattern_ok && flushed == 0 && refused == -E_INVALID &&
              device_error == -E_IO;
    printf("@json {\"kind\":\"dkcheck\",\"driver\":\"%s\",\"port\":%u,\"sectors\":%lu,"
           "\"sectors_read\":%lu,\"read_result\":%ld,\"crc32\":\"%08x\",\"pattern_lba\":%lu,"
           "\"pattern_sectors\":%u,\"pattern_ok\":%s,\"flush\":%ld,\"beyond_end\":%ld,\"device_"
           "error\":%ld,"
           "\"interrupts\":%lu,\"ok\":%s}\n",
           device->driver, device->port, device->sectors, sectors_to_read, read_result, crc,
           pattern_lba, PATTERN_SECTORS, pattern_ok ? "true" : "false", flushed, refused,
           device_error, device->interrupts, ok ? "true" : "false");
    return ok ? 0 : 1;
}
