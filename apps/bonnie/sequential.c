/* sequential.c: Tim Bray's sequential Bonnie tests on one file: per-character
 * write (putc through a small buffer), block write, rewrite, per-character
 * read (getc), block read; Bonnie's table plus one @json line per test. */
#include "bonnie.h"
#include "bonnie_random.h"
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_BYTES (16u * 1024) /* Bonnie's chunk for block I/O */
#define CHARACTER_BUFFER 4096u   /* the "stdio" buffer of putc and getc */
#define TEST_COUNT 5

/* A putc/getc buffer over a descriptor, like a stdio FILE. */
struct char_stream {
    int fd;
    uint8_t bytes[CHARACTER_BUFFER];
    uint32_t used, filled;
    long error;
};

struct test_result {
    const char *name;
    uint64_t elapsed_us;
};

static uint8_t expected_byte(uint64_t offset, bool rewritten)
{
    uint8_t byte = bonnie_fill_byte(offset);
    return rewritten && offset % BLOCK_BYTES == 0 ? (uint8_t)~byte : byte;
}

static void stream_flush(struct char_stream *stream)
{
    if (stream->used > 0 && stream->error == 0) {
        long written = write(stream->fd, stream->bytes, stream->used);
        if (written != (long)stream->used)
            stream->error = written < 0 ? written : -E_NO_SPACE;
    }
    stream->used = 0;
}

static void stream_putc(struct char_stream *stream, uint8_t byte)
{
    stream->bytes[stream->used++] = byte;
    if (stream->used == CHARACTER_BUFFER)
        stream_flush(stream);
}

/* The next byte, or -1 at the end or on an error. */
static int stream_getc(struct char_stream *stream)
{
    if (stream->used == stream->filled) {
        long got = read(stream->fd, stream->bytes, CHARACTER_BUFFER);
        if (got <= 0) {
            stream->error = got;
            return -1;
        }
        stream->filled = (uint32_t)got;
        stream->used = 0;
    }
    return stream->bytes[stream->used++];
}

static long test_putc(const struct bonnie_options *options, struct char_stream *stream)
{
    stream->fd = open(options->path, O_WRONLY | O_CREAT | O_TRUNC);
    if (stream->fd < 0)
        return stream->fd;
    for (uint64_t offset = 0; offset < options->file_bytes; offset++)
        stream_putc(stream, bonnie_fill_byte(offset));
    stream_flush(stream);
    close(stream->fd);
    return stream->error;
}

static long test_getc(const struct bonnie_options *options, struct char_stream *stream)
{
    stream->fd = open(options->path, O_RDONLY);
    if (stream->fd < 0)
        return stream->fd;
    uint64_t offset = 0, wrong = 0;
    for (int byte; (byte = stream_getc(stream)) >= 0; offset++)
        wrong += byte != expected_byte(offset, true);
    close(stream->fd);
    if (stream->error < 0)
        return stream->error;
    return offset == options->file_bytes && wrong == 0 ? 0 : -E_CORRUPT;
}

static void fill_block(uint8_t *block, uint64_t offset, uint64_t length)
{
    for (uint64_t i = 0; i < length; i++)
        block[i] = bonnie_fill_byte(offset + i);
}

static uint64_t block_length(const struct bonnie_options *options, uint64_t offset)
{
    uint64_t left = options->file_bytes - offset;
    return left < BLOCK_BYTES ? left : BLOCK_BYTES;
}

static long test_block_write(const struct bonnie_options *options, uint8_t *block)
{
    int fd = open(options->path, O_WRONLY | O_CREAT | O_TRUNC);
    if (fd < 0)
        return fd;
    long result = 0;
    for (uint64_t offset = 0; offset < options->file_bytes && result >= 0; offset += BLOCK_BYTES) {
        uint64_t length = block_length(options, offset);
        fill_block(block, offset, length);
        result = write(fd, block, length);
        if (result >= 0 && (uint64_t)result != length)
            result = -E_NO_SPACE;
    }
    close(fd);
    return result < 0 ? result : 0;
}

/* Bonnie's rewrite: read a block, dirty it, seek back, write it. */
static long test_rewrite(const struct bonnie_options *options, uint8_t *block)
{
    int fd = open(options->path, O_RDWR);
    if (fd < 0)
        return fd;
    long result = 0;
    for (uint64_t offset = 0; offset < options->file_bytes && result >= 0; offset += BLOCK_BYTES) {
        uint64_t length = block_length(options, offset);
        result = read(fd, block, length);
        if (result >= 0 && (uint64_t)result != length)
            result = -E_CORRUPT;
        block[0] = (uint8_t)~block[0];
        if (result >= 0)
            result = lseek(fd, (int64_t)offset, SEEK_SET);
        if (result >= 0)
            result = write(fd, block, length);
    }
    close(fd);
    return result < 0 ? result : 0;
}

static long test_block_read(const struct bonnie_options *options, uint8_t *block)
{
    int fd = open(options->path, O_RDONLY);
    if (fd < 0)
        return fd;
    long result = 0;
    for (uint64_t offset = 0; offset < options->file_bytes && result >= 0; offset += BLOCK_BYTES) {
        uint64_t length = block_length(options, offset);
        result = read(fd, block, length);
        if (result >= 0 && (uint64_t)result != length)
            result = -E_CORRUPT;
        for (uint64_t i = 0; result >= 0 && i < length; i++)
            if (block[i] != expected_byte(offset + i, true))
                result = -E_CORRUPT;
    }
    close(fd);
    return result < 0 ? result : 0;
}

/* Runs test `index`; returns 0 or an error. */
static long run_test(int index, const struct bonnie_options *options, struct char_stream *stream,
                     uint8_t *block)
{
    memset(stream, 0, sizeof *stream);
    switch (index) {
    case 0:
        return test_putc(options, stream);
    case 1:
        return test_block_write(options, block);
    case 2:
        return test_rewrite(options, block);
    case 3:
        return test_getc(options, stream);
    default:
        return test_block_read(options, block);
    }
}

static uint64_t kilobytes_per_second(uint64_t bytes, uint64_t elapsed_us)
{
    return elapsed_us == 0 ? 0 : bytes * 1000000u / 1024u / elapsed_us;
}

static void print_table(const struct bonnie_options *options, const struct test_result *results)
{
    printf("              -------Sequential Output-------- ---Sequential Input--\n");
    printf("              -Per Char- --Block--- -Rewrite-- -Per Char- --Block---\n");
    printf("Machine    KB K/sec %%CPU K/sec %%CPU K/sec %%CPU K/sec %%CPU K/sec %%CPU\n");
    printf("formica %5lu", options->file_bytes / 1024);
    for (int i = 0; i < TEST_COUNT; i++)
        printf(" %5lu   --", kilobytes_per_second(options->file_bytes, results[i].elapsed_us));
    printf("\n(%%CPU is not measured: --)\n");
}

int bonnie_run_sequential(const struct bonnie_options *options)
{
    static const char *names[TEST_COUNT] = {"putc", "write", "rewrite", "getc", "read"};
    struct test_result results[TEST_COUNT];
    struct char_stream *stream = malloc(sizeof *stream);
    uint8_t *block = malloc(BLOCK_BYTES);
    if (stream == NULL || block == NULL) {
        printf("bonnie: sequential: no memory for its buffers\n");
        return 1;
    }
    for (int i = 0; i < TEST_COUNT; i++) {
        uint64_t start = read_timestamp_counter();
        long error = run_test(i, options, stream, block);
        results[i].name = names[i];
        results[i].elapsed_us = bonnie_cycles_to_us(read_timestamp_counter() - start);
        if (error != 0) {
            printf("bonnie: sequential %s on %s failed: %s\n", names[i], options->path,
                   error_text(error));
            return 1;
        }
        printf("@json {\"kind\":\"bonnie_sequential\",\"test\":\"%s\",\"bytes\":%lu,"
               "\"elapsed_us\":%lu,\"kb_per_sec\":%lu}\n",
               names[i], options->file_bytes, results[i].elapsed_us,
               kilobytes_per_second(options->file_bytes, results[i].elapsed_us));
    }
    print_table(options, results);
    return 0;
}
