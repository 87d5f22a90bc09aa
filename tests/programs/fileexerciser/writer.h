/* writer.h: the writer's state, shared by its loop (writer.c) and the
 * checked calls of each operation (perform.c). */
#pragma once
#include "exerciser.h"

struct writer {
    const struct exerciser_options *options;
    struct model model;
    int fd;
    bool append;     /* the descriptor is open with O_APPEND */
    uint8_t *buffer; /* a transfer's bytes: max_transfer_bytes */
    long reader;     /* the reader's pid, or -1 */
    uint64_t counts[OPERATION_KINDS];
    uint64_t bytes_read, bytes_written;
    bool failed;
};

/* Does `operation` through the file library and checks its outcome (and
 * every byte read) against the model, then applies it to the model; false
 * after a mismatch, which it reports. */
bool perform_operation(struct writer *writer, const struct operation *operation);
/* The call and its checks alone, neither counted nor applied (the final
 * read-back). */
bool perform_checked(struct writer *writer, const struct operation *operation);

/* Opens the file (O_RDWR and `flags`); false after a report. */
bool writer_open(struct writer *writer, const struct operation *operation, int flags);

/* One notification taken, counting those one wait returned together. */
void await_one(uint64_t *pending);
