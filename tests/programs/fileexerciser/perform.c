/* perform.c: each of the writer's operations through the file library,
 * checked at once against the model: every count, every byte read (exactly
 * the model's: the writer alone writes), the size fstat and lseek give. */
#include "writer.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/storage.h>
#include <string.h>

/* Reports a mismatch and marks the run failed: false. */
static bool mismatch(struct writer *writer, const struct operation *operation, const char *what,
                     uint64_t offset, long expected, long got)
{
    report_mismatch("writer", writer->options, operation, what, offset, expected, got);
    writer->failed = true;
    return false;
}

/* A call's result is `expected` (a negative one is an error of the call). */
static bool returned(struct writer *writer, const struct operation *operation, const char *what,
                     long expected, long got)
{
    if (got == expected)
        return true;
    return mismatch(writer, operation, got < 0 ? "error" : what, operation->offset, expected, got);
}

/* A read's count and bytes against the model. */
static bool read_matches(struct writer *writer, const struct operation *operation, long got,
                         const uint8_t *data)
{
    uint64_t expected = model_read_count(&writer->model, operation->offset, operation->length);
    if (!returned(writer, operation, "count", (long)expected, got))
        return false;
    const uint8_t *model = writer->model.bytes + operation->offset;
    if (expected > 0 && memcmp(data, model, expected) != 0) {
        uint64_t i = 0;
        while (data[i] == model[i])
            i++;
        return mismatch(writer, operation, "byte", operation->offset + i, model[i], data[i]);
    }
    writer->bytes_read += expected;
    return true;
}

static bool seek_to(struct writer *writer, const struct operation *operation)
{
    return returned(writer, operation, "lseek", (long)operation->offset,
                    lseek(writer->fd, (int64_t)operation->offset, SEEK_SET));
}

static bool perform_read(struct writer *writer, const struct operation *operation)
{
    int fd = writer->fd;
    uint8_t *buffer = writer->buffer;
    uint64_t offset = operation->offset, length = operation->length;
    switch (operation->kind) {
    case OPERATION_READ:
        return seek_to(writer, operation) &&
               read_matches(writer, operation, read(fd, buffer, length), buffer);
    case OPERATION_PREAD:
        return read_matches(writer, operation, pread(fd, buffer, length, offset), buffer);
    case OPERATION_READBYTE:
        return read_matches(writer, operation, readbyte(fd, length, offset, buffer), buffer);
    }
    const void *data = NULL; /* OPERATION_READBLOCK */
    long got = readblock(fd, (uint32_t)(length / STORAGE_BLOCK_BYTES), offset / STORAGE_BLOCK_BYTES,
                         &data);
    return read_matches(writer, operation, got, data);
}

static bool perform_write(struct writer *writer, const struct operation *operation)
{
    int fd = writer->fd;
    uint8_t *bytes = writer->buffer;
    uint64_t offset = operation->offset, length = operation->length;
    written_bytes(operation->number, offset, length, bytes);
    long got;
    switch (operation->kind) {
    case OPERATION_WRITE: /* with O_APPEND the library writes at the end, where it was placed */
        if (!writer->append && !seek_to(writer, operation))
            return false;
        got = write(fd, bytes, length);
        break;
    case OPERATION_PWRITE:
        got = pwrite(fd, bytes, length, offset);
        break;
    case OPERATION_WRITEBYTE:
        got = writebyte(fd, length, offset, bytes);
        break;
    default: /* OPERATION_WRITEBLOCK */
        got = writeblock(fd, (uint32_t)(length / STORAGE_BLOCK_BYTES), offset / STORAGE_BLOCK_BYTES,
                         bytes);
    }
    if (!returned(writer, operation, "count", (long)length, got))
        return false;
    writer->bytes_written += length;
    return true;
}

bool writer_open(struct writer *writer, const struct operation *operation, int flags)
{
    int fd = open(writer->options->path, O_RDWR | flags);
    if (fd < 0)
        return mismatch(writer, operation, "open", 0, 0, fd);
    writer->fd = fd;
    return true;
}

static bool perform_reopen(struct writer *writer, const struct operation *operation)
{
    if (!returned(writer, operation, "close", 0, close(writer->fd)))
        return false;
    int flags = (operation->flags & REOPEN_APPEND ? O_APPEND : 0) |
                (operation->flags & REOPEN_TRUNCATE ? O_TRUNC : 0);
    writer->append = (operation->flags & REOPEN_APPEND) != 0;
    return writer_open(writer, operation, flags);
}

static bool perform_stat(struct writer *writer, const struct operation *operation)
{
    struct file_status status;
    long error = fstat(writer->fd, &status);
    if (!returned(writer, operation, "fstat", 0, error))
        return false;
    if (!returned(writer, operation, "size", (long)writer->model.size, (long)status.size))
        return false;
    return returned(writer, operation, "lseek_end", (long)writer->model.size,
                    lseek(writer->fd, 0, SEEK_END));
}

bool perform_checked(struct writer *writer, const struct operation *operation)
{
    switch (operation->kind) {
    case OPERATION_READ:
    case OPERATION_PREAD:
    case OPERATION_READBLOCK:
    case OPERATION_READBYTE:
        return perform_read(writer, operation);
    case OPERATION_WRITE:
    case OPERATION_PWRITE:
    case OPERATION_WRITEBLOCK:
    case OPERATION_WRITEBYTE:
        return perform_write(writer, operation);
    case OPERATION_TRUNCATE:
        return returned(writer, operation, "ftruncate", 0,
                        ftruncate(writer->fd, operation->length));
    case OPERATION_FSYNC:
        return returned(writer, operation, "fsync", 0, fsync(writer->fd));
    case OPERATION_REOPEN:
        return perform_reopen(writer, operation);
    case OPERATION_STAT:
        return perform_stat(writer, operation);
    }
    return mismatch(writer, operation, "kind", 0, 0, operation->kind);
}

bool perform_operation(struct writer *writer, const struct operation *operation)
{
    if (!perform_checked(writer, operation))
        return false;
    writer->counts[operation->kind]++;
    model_apply(&writer->model, operation);
    return true;
}
