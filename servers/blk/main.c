/* servers/blk/main.c: BLK, the file cache server (program "blk"). `blk
 * [--cache-kib N]` caches N KiB of disk blocks (default 8 MiB); it answers
 * requests one at a time and asks DK on a miss. */
#include "cache.h"
#include "disk_client.h"
#include "requests.h"
#include <formica/request.h>
#include <formica/server_placeholder.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CACHE_KIB (8u * 1024)

static struct cache cache;

/* Each cached block lives in its own block ICA, so BLK can lend it. */
static int block_ica(void *context, uint8_t **data, uint64_t *handle)
{
    (void)context;
    long id = ica_allocate(ICA_KIND_BLOCK, STORAGE_BLOCK_BYTES);
    if (id < 0)
        return (int)id;
    *data = ica_address((uint64_t)id);
    *handle = (uint64_t)id;
    return 0;
}

/* A block lent to a requester that has not passed its control ICA on yet. */
static bool block_lent(void *context, uint64_t handle)
{
    (void)context;
    return syscall6(SYS_ICA_LEND_COUNT, (long)handle, 0, 0, 0, 0, 0) > 0;
}

static uint32_t capacity_from(int argc, char **argv)
{
    uint64_t kib = DEFAULT_CACHE_KIB;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--cache-kib") == 0)
            kib = strtoul(argv[i + 1], NULL, 0);
    uint64_t blocks = kib * 1024 / STORAGE_BLOCK_BYTES;
    return blocks < 2 * CACHE_MAX_RUN ? 2 * CACHE_MAX_RUN : (uint32_t)blocks;
}

/* Answers a request, then returns it and receives the next in one system
 * call; a failed return is reported and followed by a plain receive. */
static _Noreturn void serve(void)
{
    long control = ica_receive(0);
    for (;;) {
        if (control < 0) {
            printf("blk: receive failed: %s\n", error_text(control));
            exit(1);
        }
        blk_answer(&cache, (uint64_t)control);
        long next = ica_return_receive((uint64_t)control, 0, 0);
        if (next >= 0) {
            control = next;
            continue;
        }
        printf("blk: return failed: %s\n", error_text(next));
        control = ica_receive(0);
    }
}

int main(int argc, char **argv)
{
    struct cache_disk disk;
    int error = disk_client_open(&disk);
    if (error != 0) {
        printf("blk: no disk through dk (%s); not serving\n", error_text(error));
        run_server_placeholder(SERVER_NAME_BLK);
    }
    uint32_t capacity = capacity_from(argc, argv);
    struct cache_memory memory = {NULL, block_ica, block_lent};
    error = cache_init(&cache, capacity, &disk, &memory);
    if (error == 0)
        error = (int)server_register(SERVER_NAME_BLK);
    if (error != 0) {
        printf("blk: cannot start: %s\n", error_text(error));
        return 1;
    }
    printf("blk: cache of %u blocks (%u KiB), disk of %lu blocks\n", capacity,
           capacity * (STORAGE_BLOCK_BYTES / 1024), disk.blocks);
    serve();
}
