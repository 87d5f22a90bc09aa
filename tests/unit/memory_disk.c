/* memory_disk.c: the in-memory disk of memory_disk.h: reads and writes
 * copy whole blocks, counted; a write after the crash model's crash is
 * dropped, and the runs of the first writes are kept in order. */
#include "memory_disk.h"

#include <string.h>

#include <formica/errors.h>

void memory_disk_reset(struct memory_disk *disk, uint8_t (*bytes)[CACHE_BLOCK_BYTES],
                       uint64_t blocks)
{
    memset(disk, 0, sizeof *disk);
    memset(bytes, 0, blocks * CACHE_BLOCK_BYTES);
    disk->bytes = bytes;
    disk->blocks = blocks;
}

int memory_disk_read(void *context, uint64_t first, uint32_t count, uint8_t *const *buffers)
{
    struct memory_disk *disk = context;
    if (disk->fail_reads)
        return -E_IO;
    disk->reads++;
    for (uint32_t i = 0; i < count; i++)
        memcpy(buffers[i], disk->bytes[first + i], CACHE_BLOCK_BYTES);
    return 0;
}

int memory_disk_write(void *context, uint64_t first, uint32_t count, const uint8_t *const *buffers)
{
    struct memory_disk *disk = context;
    if (disk->fail_writes)
        return -E_IO;
    if (disk->stopped != NULL && *disk->stopped)
        return 0;
    if (disk->writes < MEMORY_DISK_LOGGED_WRITES) {
        disk->write_first[disk->writes] = first;
        disk->write_count[disk->writes] = count;
    }
    disk->writes++;
    disk->blocks_written += count;
    for (uint32_t i = 0; i < count; i++)
        memcpy(disk->bytes[first + i], buffers[i], CACHE_BLOCK_BYTES);
    return 0;
}

int memory_disk_flush(void *context)
{
    struct memory_disk *disk = context;
    disk->flushes++;
    disk->writes_at_flush = disk->writes;
    return 0;
}
