/* fio.c: flashbench's FIO-like workload (seed 000 §3's M-IO): random reads
 * and writes of io_bytes over one region of the method's memory, half of
 * each, then a sync (msync for the mmap method) inside the timed part. Each
 * write stamps its block with a round number kept in a shadow table; each
 * read checks the block's stamp, and the whole region is checked at the end. */
#include "flashbench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_OPERATIONS 20000

struct stamp {
    uint64_t block;
    uint64_t round;
};

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool stamped(const uint8_t *block, uint64_t index, uint64_t round)
{
    struct stamp stamp;
    memcpy(&stamp, block, sizeof stamp);
    /* a block never written reads as zeroes: its stamp is round 0 of block 0 */
    return round == 0 ? stamp.round == 0 : stamp.block == index && stamp.round == round;
}

/* One random operation on block `index`; false when a read found another stamp. */
static bool operate(uint8_t *region, uint8_t *buffer, uint64_t io_bytes, uint64_t index, bool write,
                    uint64_t *shadow, uint64_t round)
{
    uint8_t *block = region + index * io_bytes;
    if (!write) {
        memcpy(buffer, block, io_bytes);
        return stamped(buffer, index, shadow[index]);
    }
    struct stamp stamp = {index, round};
    memset(buffer, (int)(round & 0xff), io_bytes);
    memcpy(buffer, &stamp, sizeof stamp);
    memcpy(block, buffer, io_bytes);
    shadow[index] = round;
    return true;
}

long flash_fio(const struct flash_options *options, struct flash_result *result)
{
    uint64_t io = options->io_bytes != 0 ? options->io_bytes : 4096;
    uint64_t blocks = options->bytes / io;
    if (io < sizeof(struct stamp) || blocks == 0) {
        printf("flashbench: fio wants io of 16 bytes or more and data of at least one io\n");
        return -1;
    }
    uint64_t operations = options->rounds != 0 ? options->rounds : DEFAULT_OPERATIONS;
    uint64_t *shadow = calloc(blocks, sizeof *shadow);
    uint8_t *buffer = malloc(io);
    uint8_t *region = flash_memory_start(options, 1) == 0 ? flash_memory_take(blocks * io) : NULL;
    if (shadow == NULL || buffer == NULL || region == NULL)
        return -1;
    uint64_t random = 42, mismatches = 0;
    uint64_t start = flash_now_us();
    for (uint64_t round = 1; round <= operations; round++) {
        uint64_t draw = splitmix64(&random);
        mismatches += !operate(region, buffer, io, (draw >> 1) % blocks, draw & 1, shadow, round);
    }
    long synced = flash_memory_sync();
    result->microseconds = flash_now_us() - start;
    for (uint64_t index = 0; index < blocks; index++)
        mismatches += !stamped(region + index * io, index, shadow[index]);
    flash_memory_end();
    result->verified = mismatches == 0 && synced == 0;
    result->rounds = operations;
    result->work_bytes = operations * io;
    free(buffer);
    free(shadow);
    return 0;
}
