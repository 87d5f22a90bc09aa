/* reader.c: fileexerciser's reader on another core (another FS instance):
 * regenerates the writer's operations, reads in turns between its epochs,
 * and checks each read against the window it ran in (window.c). */
#include "writer.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

struct reader {
    const struct exerciser_options *options;
    struct generator writer_generator; /* the writer's operations, regenerated */
    struct generator read_generator;   /* the reader's own reads */
    struct model model;                /* the file after the writer's first `applied` */
    uint32_t applied;
    struct operation *upcoming; /* the operations of the epoch now running */
    uint32_t upcoming_count;
    int fd;
    uint8_t *buffer;
    uint64_t turns, reads, bytes_checked;
    bool failed;
};

/* The writer's next operation, regenerated (and logged for a report). */
static struct operation writer_operation(struct reader *reader)
{
    struct operation operation = generator_next(&reader->writer_generator);
    history_add(&operation);
    return operation;
}

/* The model after the writer's first `done` operations: the epoch that
 * ran is applied (and, before the first turn, the epoch before it). */
static void catch_up(struct reader *reader, uint32_t done)
{
    for (uint32_t i = 0; i < reader->upcoming_count; i++)
        model_apply(&reader->model, &reader->upcoming[i]);
    reader->applied += reader->upcoming_count;
    reader->upcoming_count = 0;
    while (reader->applied < done) {
        struct operation operation = writer_operation(reader);
        model_apply(&reader->model, &operation);
        reader->applied++;
    }
}

/* The operations the writer may do during this turn. */
static void foresee(struct reader *reader)
{
    uint32_t left = reader->options->operations - reader->applied;
    uint32_t count =
        left < reader->options->epoch_operations ? left : reader->options->epoch_operations;
    for (uint32_t i = 0; i < count; i++)
        reader->upcoming[i] = writer_operation(reader);
    reader->upcoming_count = count;
}

static struct window current_window(const struct reader *reader)
{
    return (struct window){&reader->model, reader->upcoming, reader->upcoming_count};
}

/* Reports what the window did not allow, with the window itself. */
static bool mismatch(struct reader *reader, struct operation *asked, const char *what,
                     uint64_t offset, long expected, long got)
{
    asked->number = reader->applied;
    report_mismatch("reader", reader->options, asked, what, offset, expected, got);
    printf("fileexerciser: reader: the read ran after the writer's operation %u, during at "
           "most %u more (the last %u below); the file was %lu bytes before them\n",
           reader->applied, reader->upcoming_count, reader->upcoming_count, reader->model.size);
    history_print_tail(reader->options);
    reader->failed = true;
    return false;
}

/* A read's count and bytes against the window. */
static bool read_allowed(struct reader *reader, struct operation *asked, long got,
                         const uint8_t *data)
{
    struct window window = current_window(reader);
    if (got < 0)
        return mismatch(reader, asked, "error", asked->offset, 0, got);
    if (!window_allows_count(&window, asked->offset, asked->length, (uint64_t)got))
        return mismatch(reader, asked, "count", asked->offset,
                        (long)model_read_count(&reader->model, asked->offset, asked->length), got);
    bool lent = asked->kind == OPERATION_READBLOCK || asked->kind == OPERATION_READBYTE;
    uint64_t wrong = window_first_wrong_byte(&window, asked->offset, data, (uint64_t)got, lent);
    if (wrong != UINT64_MAX) {
        uint64_t at = wrong - asked->offset;
        long before = wrong < reader->model.max_file_bytes ? reader->model.bytes[wrong] : 0;
        return mismatch(reader, asked, "byte", wrong, before, data[at]);
    }
    reader->reads++;
    reader->bytes_checked += (uint64_t)got;
    return true;
}

static bool size_allowed(struct reader *reader, struct operation *asked)
{
    struct file_status status;
    long error = fstat(reader->fd, &status);
    if (error != 0)
        return mismatch(reader, asked, "fstat", 0, 0, error);
    struct window window = current_window(reader);
    if (!window_allows_size(&window, status.size))
        return mismatch(reader, asked, "size", 0, (long)reader->model.size, (long)status.size);
    return true;
}

static bool reader_read(struct reader *reader, struct operation *asked)
{
    int fd = reader->fd;
    uint8_t *buffer = reader->buffer;
    switch (asked->kind) {
    case OPERATION_STAT:
        return size_allowed(reader, asked);
    case OPERATION_READ: {
        long at = lseek(fd, (int64_t)asked->offset, SEEK_SET);
        if (at != (long)asked->offset)
            return mismatch(reader, asked, "lseek", asked->offset, (long)asked->offset, at);
        return read_allowed(reader, asked, read(fd, buffer, asked->length), buffer);
    }
    case OPERATION_PREAD:
        return read_allowed(reader, asked, pread(fd, buffer, asked->length, asked->offset), buffer);
    case OPERATION_READBYTE:
        return read_allowed(reader, asked, readbyte(fd, asked->length, asked->offset, buffer),
                            buffer);
    }
    const void *data = NULL;
    long got = readblock(fd, (uint32_t)(asked->length / STORAGE_BLOCK_BYTES),
                         asked->offset / STORAGE_BLOCK_BYTES, &data);
    return read_allowed(reader, asked, got, data);
}

/* One turn's reads. Readbyte's blocks are dropped first (another process's
 * writes are not seen through them, docs/files.md) and the size is taken
 * from fstat (readbyte stops at the size the descriptor knows). */
static void take_turn(struct reader *reader)
{
    reader->turns++;
    struct operation stat = {.kind = OPERATION_STAT};
    readbyte_invalidate(reader->fd);
    if (!size_allowed(reader, &stat))
        return;
    for (uint32_t i = 0; i < reader->options->reads_per_turn; i++) {
        struct operation asked = generator_next_read(&reader->read_generator, reader->model.size);
        if (!reader_read(reader, &asked))
            return;
    }
}

/* The file no longer changes: all of it, with pread, readblock and readbyte. */
static void read_whole_file(struct reader *reader)
{
    struct operation stat = {.kind = OPERATION_STAT};
    readbyte_invalidate(reader->fd);
    if (!size_allowed(reader, &stat))
        return;
    static const uint8_t kinds[] = {OPERATION_PREAD, OPERATION_READBLOCK, OPERATION_READBYTE};
    uint64_t piece =
        reader->options->max_transfer_bytes / STORAGE_BLOCK_BYTES * STORAGE_BLOCK_BYTES;
    if (piece > READBLOCK_MAX_BLOCKS * STORAGE_BLOCK_BYTES)
        piece = READBLOCK_MAX_BLOCKS * STORAGE_BLOCK_BYTES;
    for (uint32_t k = 0; k < sizeof kinds; k++) {
        for (uint64_t offset = 0; offset <= reader->model.size; offset += piece) {
            struct operation asked = {.kind = kinds[k], .offset = offset, .length = piece};
            if (!reader_read(reader, &asked))
                return;
        }
    }
}

static void print_result(const struct reader *reader)
{
    printf("@json {\"kind\":\"fileexerciser_reader\",\"seed\":%lu,\"ok\":%s,\"turns\":%lu,"
           "\"reads\":%lu,\"bytes_checked\":%lu,\"epoch\":%u,\"core\":%ld}\n",
           reader->options->seed, reader->failed ? "false" : "true", reader->turns, reader->reads,
           reader->bytes_checked, reader->options->epoch_operations, core_id());
}

static bool reader_start(struct reader *reader, const struct exerciser_options *options)
{
    *reader = (struct reader){.options = options};
    generator_start(&reader->writer_generator, options, 0);
    generator_start(&reader->read_generator, options, 1);
    reader->upcoming = malloc(options->epoch_operations * sizeof *reader->upcoming);
    reader->buffer = malloc(options->max_transfer_bytes);
    if (reader->upcoming == NULL || reader->buffer == NULL ||
        !model_start(&reader->model, options->max_file_bytes)) {
        printf("fileexerciser: reader: no memory\n");
        return false;
    }
    reader->fd = open(options->path, O_RDONLY);
    if (reader->fd < 0) {
        printf("fileexerciser: reader: open %s: %s\n", options->path, error_text(reader->fd));
        return false;
    }
    return true;
}

/* The turns: the writer notifies after each epoch of its operations and
 * waits to be let start the next. Told, the reader brings its model to the
 * writer's first `done` operations, lets it go on and reads while the
 * writer does the next epoch: each read began after operation `done`
 * returned and ended before operation done + epoch + 1 began. Once the
 * writer is done, the whole file must be exactly the model. */
int reader_run(const struct exerciser_options *options)
{
    struct reader reader;
    if (!reader_start(&reader, options))
        reader.failed = true;
    uint32_t epoch = options->epoch_operations;
    uint64_t told = 0;
    for (uint32_t done = 0; done < options->operations;) {
        await_one(&told); /* the writer has done another epoch */
        done = done + epoch < options->operations ? done + epoch : options->operations;
        if (reader.failed) {
            if (done < options->operations)
                notify(options->writer_pid);
            continue;
        }
        catch_up(&reader, done);
        if (done == options->operations)
            break;
        notify(options->writer_pid); /* the next epoch may begin */
        foresee(&reader);
        take_turn(&reader);
    }
    if (!reader.failed)
        read_whole_file(&reader);
    print_result(&reader);
    return reader.failed ? 1 : 0;
}
