/* generator.c: fileexerciser's seeded operations: splitmix64 chooses each
 * one's kind, place and length from the size the operations before left,
 * so a seed replays a run and a reader regenerates its writer's. */
#include "exerciser.h"
#include <formica/storage.h>

/* How often each kind comes, out of the sum. */
static const uint8_t kind_weights[OPERATION_KINDS] = {
    [OPERATION_READ] = 7,     [OPERATION_WRITE] = 7,     [OPERATION_PREAD] = 8,
    [OPERATION_PWRITE] = 8,   [OPERATION_READBLOCK] = 8, [OPERATION_WRITEBLOCK] = 6,
    [OPERATION_READBYTE] = 9, [OPERATION_WRITEBYTE] = 8, [OPERATION_TRUNCATE] = 5,
    [OPERATION_FSYNC] = 2,    [OPERATION_REOPEN] = 2,    [OPERATION_STAT] = 3,
};

#define BLOCK STORAGE_BLOCK_BYTES
#define HOLE_REACH (64u * 1024)    /* how far past the end a write may start */
#define GROWTH_REACH (256u * 1024) /* how far an extending truncate may go */

void generator_start(struct generator *generator, const struct exerciser_options *options,
                     uint64_t stream)
{
    generator->state = options->seed ^ stream * 0xd1b54a32d192ed03ull;
    generator->next_number = 1;
    generator->size = 0;
    generator->recent_offset = 0;
    generator->append = false;
    generator->max_file_bytes = options->max_file_bytes;
    generator->max_transfer_bytes = options->max_transfer_bytes;
}

uint64_t random_next(struct generator *generator)
{
    uint64_t value = (generator->state += 0x9e3779b97f4a7c15ull);
    value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ull;
    value = (value ^ (value >> 27)) * 0x94d049bb133111ebull;
    return value ^ (value >> 31);
}

uint64_t random_below(struct generator *generator, uint64_t bound)
{
    return bound == 0 ? 0 : random_next(generator) % bound;
}

static uint64_t at_most(uint64_t value, uint64_t limit)
{
    return value < limit ? value : limit;
}

uint64_t random_length(struct generator *generator)
{
    uint64_t choice = random_below(generator, 1000), reach;
    if (choice < 450)
        reach = 64;
    else if (choice < 750)
        reach = BLOCK;
    else if (choice < 950)
        reach = 16 * BLOCK;
    else if (choice < 995)
        reach = 64 * BLOCK;
    else
        reach = generator->max_transfer_bytes;
    return 1 + random_below(generator, at_most(reach, generator->max_transfer_bytes));
}

/* A block count for readblock and writeblock: mostly a few, at times 64. */
static uint64_t random_blocks(struct generator *generator)
{
    uint64_t choice = random_below(generator, 100);
    uint64_t reach = choice < 70 ? 4 : choice < 95 ? 16 : 64;
    return 1 + random_below(generator, at_most(reach, generator->max_transfer_bytes / BLOCK));
}

/* Where a write starts: inside the file, at its end, past it (a hole), at a
 * block's edge, anywhere. */
static uint64_t write_offset(struct generator *generator)
{
    uint64_t size = generator->size, choice = random_below(generator, 100);
    if (choice < 50)
        return random_below(generator, size + 1);
    if (choice < 65)
        return size;
    if (choice < 80)
        return size + random_below(generator, HOLE_REACH);
    if (choice < 90) {
        uint64_t edge = random_below(generator, generator->max_file_bytes / BLOCK + 1) * BLOCK;
        uint64_t near = random_below(generator, 9);
        return edge + near >= 4 ? edge + near - 4 : 0;
    }
    return random_below(generator, generator->max_file_bytes);
}

/* Where a read starts: anywhere in the file, near its end (its partial
 * last block, which readbyte buffers apart), past it, at a block's edge, or
 * near the last change (a read of what was just written or cut). */
static uint64_t read_offset(struct generator *generator, uint64_t size)
{
    uint64_t choice = random_below(generator, 100);
    if (choice < 30)
        return random_below(generator, size + 1);
    if (choice < 50)
        return size - random_below(generator, at_most(size, 2 * BLOCK) + 1);
    if (choice < 60)
        return size + random_below(generator, 2 * BLOCK);
    if (choice < 75)
        return random_below(generator, size / BLOCK + 2) * BLOCK;
    uint64_t recent = generator->recent_offset, before = at_most(recent, 2 * BLOCK);
    return recent - before + random_below(generator, before + 2 * BLOCK);
}

/* The new size of a truncate: shorter, longer, a block's edge, anything. */
static uint64_t truncate_size(struct generator *generator)
{
    uint64_t size = generator->size, max = generator->max_file_bytes;
    uint64_t choice = random_below(generator, 100);
    if (choice < 40)
        return random_below(generator, size + 1);
    if (choice < 70)
        return at_most(size + random_below(generator, GROWTH_REACH), max);
    if (choice < 85)
        return random_below(generator, max / BLOCK + 1) * BLOCK;
    return random_below(generator, max + 1);
}

static uint8_t random_kind(struct generator *generator)
{
    uint32_t total = 0;
    for (uint32_t kind = 0; kind < OPERATION_KINDS; kind++)
        total += kind_weights[kind];
    uint64_t pick = random_below(generator, total);
    uint8_t kind = 0;
    while (pick >= kind_weights[kind])
        pick -= kind_weights[kind++];
    return kind;
}

/* A write of `operation->kind` placed and sized within the largest file. */
static void place_write(struct generator *generator, struct operation *operation)
{
    uint64_t max = generator->max_file_bytes;
    if (operation->kind == OPERATION_WRITEBLOCK) {
        uint64_t blocks = at_most(random_blocks(generator), max / BLOCK);
        uint64_t last_start = max / BLOCK - blocks;
        uint64_t start =
            random_below(generator, 10) < 6
                ? at_most(generator->size / BLOCK + random_below(generator, 3), last_start)
                : random_below(generator, last_start + 1);
        operation->offset = start * BLOCK;
        operation->length = blocks * BLOCK;
        return;
    }
    bool appends = operation->kind == OPERATION_WRITE && generator->append;
    if (appends && generator->size >= max)
        operation->kind = OPERATION_PWRITE; /* an append would pass the largest file */
    uint64_t offset = appends && generator->size < max ? generator->size : write_offset(generator);
    offset = at_most(offset, max - 1);
    operation->offset = offset;
    operation->length = at_most(random_length(generator), max - offset);
}

/* A read of `operation->kind` in a file of `size` bytes. */
static void place_read(struct generator *generator, struct operation *operation, uint64_t size)
{
    if (operation->kind == OPERATION_READBLOCK) {
        operation->length = random_blocks(generator) * BLOCK;
        operation->offset = random_below(generator, size / BLOCK + 2) * BLOCK;
        return;
    }
    operation->offset = read_offset(generator, size);
    operation->length = random_length(generator);
}

/* What the operation does to the size and the descriptor's mode. */
static void follow(struct generator *generator, const struct operation *operation)
{
    switch (operation->kind) {
    case OPERATION_WRITE:
    case OPERATION_PWRITE:
    case OPERATION_WRITEBLOCK:
    case OPERATION_WRITEBYTE:
        generator->recent_offset = operation->offset + random_below(generator, operation->length);
        if (operation->offset + operation->length > generator->size)
            generator->size = operation->offset + operation->length;
        break;
    case OPERATION_TRUNCATE:
        generator->size = generator->recent_offset = operation->length;
        break;
    case OPERATION_REOPEN:
        generator->append = (operation->flags & REOPEN_APPEND) != 0;
        if (operation->flags & REOPEN_TRUNCATE)
            generator->size = 0;
        break;
    }
}

struct operation generator_next(struct generator *generator)
{
    struct operation operation = {.number = generator->next_number++,
                                  .kind = random_kind(generator)};
    switch (operation.kind) {
    case OPERATION_WRITE:
    case OPERATION_PWRITE:
    case OPERATION_WRITEBLOCK:
    case OPERATION_WRITEBYTE:
        place_write(generator, &operation);
        break;
    case OPERATION_READ:
    case OPERATION_PREAD:
    case OPERATION_READBLOCK:
    case OPERATION_READBYTE:
        place_read(generator, &operation, generator->size);
        break;
    case OPERATION_TRUNCATE:
        operation.length = truncate_size(generator);
        break;
    case OPERATION_REOPEN: {
        uint64_t choice = random_below(generator, 100);
        operation.flags = choice < 20 ? REOPEN_APPEND : choice < 25 ? REOPEN_TRUNCATE : 0;
        break;
    }
    }
    follow(generator, &operation);
    return operation;
}

struct operation generator_next_read(struct generator *generator, uint64_t size)
{
    static const uint8_t reads[] = {OPERATION_READ,     OPERATION_PREAD, OPERATION_READBLOCK,
                                    OPERATION_READBYTE, OPERATION_PREAD, OPERATION_READBLOCK,
                                    OPERATION_READBYTE, OPERATION_STAT};
    struct operation operation = {.kind = reads[random_below(generator, sizeof reads)]};
    if (operation.kind != OPERATION_STAT)
        place_read(generator, &operation, size);
    return operation;
}
