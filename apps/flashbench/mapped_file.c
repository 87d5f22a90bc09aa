/* mapped_file.c: flashbench's mmap method: each array a file
 * DIRECTORY/flashbench.PID.N on the disk (flash_file_directory: the root on
 * Formica, /mnt on Linux), truncated to size, mapped MAP_SHARED read-write
 * and unlinked at once; msync makes the writes durable. */
#include "flashbench.h"
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <sys/mman.h>

/* Each mapped array's file, closed when the array is given back. */
static int descriptors[16] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};

void *flash_mapped_file(uint64_t bytes, uint32_t number)
{
    char name[64];
    snprintf(name, sizeof name, "%s/flashbench.%ld.%u", flash_file_directory, process_id(), number);
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC);
    long error = fd < 0 ? fd : ftruncate(fd, bytes);
    void *base =
        error < 0 ? MAP_FAILED : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED && error == 0)
        error = mmap_error();
    if (fd >= 0)
        unlink(name);
    if (base == MAP_FAILED || number >= sizeof descriptors / sizeof descriptors[0]) {
        printf("flashbench: cannot map %s: %s\n", name, error_text(error));
        if (base != MAP_FAILED)
            munmap(base, bytes);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    descriptors[number] = fd;
    return base;
}

long flash_mapped_sync(void *base, uint64_t bytes)
{
    long error = msync(base, bytes, MS_SYNC);
    if (error != 0)
        printf("flashbench: msync: %s\n", error_text(error));
    return error;
}

void flash_mapped_end(void *base, uint64_t bytes, uint32_t number)
{
    munmap(base, bytes);
    close(descriptors[number]);
    descriptors[number] = -1;
}
