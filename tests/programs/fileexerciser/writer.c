/* writer.c: fileexerciser's writer: creates the file, starts the reader,
 * runs the seeded operations (in epochs between the reader's turns), then
 * reads the file back after an fsync and prints the result with its cksum. */
#include "writer.h"
#include <formica/cksum.h>
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

void await_one(uint64_t *pending)
{
    if (*pending == 0)
        *pending += (uint64_t)await_notification();
    (*pending)--;
}

static bool start_reader(struct writer *writer)
{
    char arguments[256];
    options_for_reader(writer->options, process_id(), arguments, sizeof arguments);
    writer->reader = spawn("fileexerciser", arguments, (uint32_t)writer->options->reader_core,
                           PRIORITY_APPLICATION);
    if (writer->reader >= 0)
        return true;
    printf("fileexerciser: the reader did not start on core %d: %s\n", writer->options->reader_core,
           error_text(writer->reader));
    return false;
}

static void trace(const struct exerciser_options *options, const struct operation *operation)
{
    if (options->trace_from == 0 || operation->number < options->trace_from)
        return;
    char text[96];
    operation_describe(operation, text, sizeof text);
    printf("fileexerciser: #%u %s\n", operation->number, text);
}

/* Every operation; the operations done. With a reader, in epochs: after
 * each the reader is notified, and the next begins when the reader has let
 * it (its turn's reads then run during that epoch, reader.c). */
static uint32_t run_operations(struct writer *writer)
{
    const struct exerciser_options *options = writer->options;
    struct generator generator;
    generator_start(&generator, options, 0);
    uint64_t permissions = 0;
    uint32_t epoch = options->epoch_operations;
    for (uint32_t number = 1; number <= options->operations; number++) {
        struct operation operation = generator_next(&generator);
        if (writer->reader >= 0 && number > 1 && (number - 1) % epoch == 0)
            await_one(&permissions); /* the reader's turn of the last epoch has begun */
        history_add(&operation);
        trace(options, &operation);
        if (!perform_operation(writer, &operation))
            return number - 1;
        if (writer->reader >= 0 && (number % epoch == 0 || number == options->operations))
            notify(writer->reader);
    }
    return options->operations;
}

/* After an fsync, the whole file read back in pieces equals the model;
 * its cksum into *crc. */
static bool file_matches_model(struct writer *writer, uint32_t *crc)
{
    struct operation whole = {.number = writer->options->operations + 1,
                              .kind = OPERATION_PREAD,
                              .length = writer->options->max_transfer_bytes};
    long synced = fsync(writer->fd);
    if (synced != 0) {
        report_mismatch("writer", writer->options, &whole, "final fsync", 0, 0, synced);
        return false;
    }
    struct cksum_state cksum;
    cksum_begin(&cksum);
    for (;;) {
        uint64_t before = writer->bytes_read;
        if (!perform_checked(writer, &whole))
            return false;
        uint64_t got = writer->bytes_read - before;
        cksum_add(&cksum, writer->model.bytes + whole.offset, got);
        if (got < whole.length)
            break;
        whole.offset += got;
    }
    *crc = cksum_end(&cksum);
    return true;
}

static void print_result(const struct writer *writer, uint32_t done, uint32_t crc, int reader_exit)
{
    const struct exerciser_options *options = writer->options;
    printf("@json {\"kind\":\"fileexerciser\",\"seed\":%lu,\"operations\":%u,\"done\":%u,"
           "\"ok\":%s,\"path\":\"%s\",\"max_file\":%lu,\"size\":%lu,\"cksum\":%u,"
           "\"bytes_read\":%lu,\"bytes_written\":%lu,\"reader_core\":%d,\"reader_exit\":%d,"
           "\"core\":%ld,\"counts\":{",
           options->seed, options->operations, done, writer->failed ? "false" : "true",
           options->path, options->max_file_bytes, writer->model.size, crc, writer->bytes_read,
           writer->bytes_written, options->reader_core, reader_exit, core_id());
    for (uint32_t kind = 0; kind < OPERATION_KINDS; kind++)
        printf("%s\"%s\":%lu", kind == 0 ? "" : ",", operation_kind_name((uint8_t)kind),
               writer->counts[kind]);
    printf("}}\n");
}

int writer_run(const struct exerciser_options *options)
{
    struct writer writer = {.options = options, .fd = -1, .reader = -1};
    printf("fileexerciser: seed %lu, %u operations on %s (at most %lu bytes, transfers up to "
           "%lu)%s\n",
           options->seed, options->operations, options->path, options->max_file_bytes,
           options->max_transfer_bytes, options->reader_core >= 0 ? ", with a reader" : "");
    writer.buffer = malloc(options->max_transfer_bytes);
    struct operation creation = {.kind = OPERATION_REOPEN, .flags = REOPEN_TRUNCATE};
    if (writer.buffer == NULL || !model_start(&writer.model, options->max_file_bytes)) {
        printf("fileexerciser: no memory for a %lu-byte model\n", options->max_file_bytes);
        return 1;
    }
    if (!writer_open(&writer, &creation, O_CREAT | O_TRUNC))
        return 1;
    if (options->reader_core >= 0 && !start_reader(&writer))
        return 1;
    uint32_t done = run_operations(&writer), crc = 0;
    if (!writer.failed)
        file_matches_model(&writer, &crc);
    int reader_exit = -1;
    if (writer.reader >= 0) {
        if (writer.failed)
            kill_process(writer.reader); /* it would wait for epochs that never come */
        wait_process(writer.reader, &reader_exit);
    }
    if (writer.failed)
        history_print_tail(options);
    close(writer.fd);
    print_result(&writer, done, crc, reader_exit);
    return writer.failed || (writer.reader >= 0 && reader_exit != 0) ? 1 : 0;
}
