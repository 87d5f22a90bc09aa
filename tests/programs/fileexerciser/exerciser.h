/* exerciser.h: what fileexerciser's parts share: the options, the seeded
 * operations, the model (shadow copy) of the file, the log of recent
 * operations, and the window a reader's read is checked against. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kinds of operation, one per call of the file library it exercises. */
enum operation_kind {
    OPERATION_READ,       /* lseek, then read at the descriptor's offset */
    OPERATION_WRITE,      /* lseek (unless O_APPEND), then write */
    OPERATION_PREAD,      /* pread */
    OPERATION_PWRITE,     /* pwrite */
    OPERATION_READBLOCK,  /* readblock of whole blocks */
    OPERATION_WRITEBLOCK, /* writeblock of whole blocks */
    OPERATION_READBYTE,   /* readbyte (the process's block buffer) */
    OPERATION_WRITEBYTE,  /* writebyte */
    OPERATION_TRUNCATE,   /* ftruncate, shrinking or extending */
    OPERATION_FSYNC,      /* fsync (also drops readbyte's buffer) */
    OPERATION_REOPEN,     /* close, then open again (O_APPEND or O_TRUNC at times) */
    OPERATION_STAT,       /* fstat and lseek(SEEK_END) against the size */
    OPERATION_KINDS,
};

/* OPERATION_REOPEN's flags. */
#define REOPEN_APPEND 1u   /* opened with O_APPEND: a write goes to the end */
#define REOPEN_TRUNCATE 2u /* opened with O_TRUNC: the file becomes empty */

/* One operation: `offset` and `length` in bytes (whole blocks for the
 * block calls), the new size for a truncate. `number` counts from 1; the
 * bytes a write writes encode it (written_byte). */
struct operation {
    uint32_t number;
    uint8_t kind;
    uint8_t flags;
    uint64_t offset;
    uint64_t length;
};

/* True for the kinds that change the file's bytes or size. */
static inline bool operation_changes_file(const struct operation *operation)
{
    switch (operation->kind) {
    case OPERATION_WRITE:
    case OPERATION_PWRITE:
    case OPERATION_WRITEBLOCK:
    case OPERATION_WRITEBYTE:
    case OPERATION_TRUNCATE:
        return true;
    case OPERATION_REOPEN:
        return (operation->flags & REOPEN_TRUNCATE) != 0;
    }
    return false;
}

/* The command line. */
struct exerciser_options {
    uint64_t seed;
    uint32_t operations;
    const char *path;
    uint64_t max_file_bytes;     /* the file never grows past this */
    uint64_t max_transfer_bytes; /* the largest read or write */
    int32_t reader_core;         /* -1: no reader; else the core of the reader */
    uint32_t epoch_operations;   /* the writer's operations between two reader turns */
    uint32_t reads_per_turn;     /* the reader's reads in each turn */
    uint32_t trace_from;         /* print every operation from this number on (0: none) */
    long writer_pid;             /* the reader's writer (the reader's own mode), else -1 */
};

/* Parses argv; false (with a usage line) when it is malformed. */
bool options_parse(int argc, char **argv, struct exerciser_options *options);
/* The arguments that start a reader of these options (options_parse reads them back). */
void options_for_reader(const struct exerciser_options *options, long writer_pid, char *buffer,
                        size_t size);

/* The seeded generator (generator.c): a 64-bit state; the same seed and
 * options give the same operations, so a run is replayed by its seed, and a
 * reader regenerates every operation of its writer. */
struct generator {
    uint64_t state;
    uint32_t next_number;
    uint64_t size;          /* the file's size after the operations made so far */
    uint64_t recent_offset; /* in the last write, or the last truncate's size */
    bool append;            /* the descriptor is open with O_APPEND */
    uint64_t max_file_bytes, max_transfer_bytes;
};
void generator_start(struct generator *generator, const struct exerciser_options *options,
                     uint64_t stream);
uint64_t random_next(struct generator *generator);
/* A number in [0, bound) (0 when bound is 0). */
uint64_t random_below(struct generator *generator, uint64_t bound);
/* A transfer length: mostly a few bytes, often up to a block, sometimes many
 * blocks, rarely up to the largest transfer (more than one 1 MiB piece). */
uint64_t random_length(struct generator *generator);
/* The next operation of the writer; it is applied to the generator's size. */
struct operation generator_next(struct generator *generator);
/* A read of the reader's (a READ, PREAD, READBLOCK, READBYTE or STAT) in a
 * file of `size` bytes; not counted in the writer's numbers. */
struct operation generator_next_read(struct generator *generator, uint64_t size);

/* The byte `operation_number`'s write puts at `offset`: never 0, so a 0 is
 * a hole's (or truncated) byte, and different writes (and offsets) differ
 * but for 1 in 255. */
static inline uint8_t written_byte(uint32_t operation_number, uint64_t offset)
{
    uint64_t mixed =
        (offset + 1) * 0x9e3779b97f4a7c15ull ^ operation_number * 0xc2b2ae3d27d4eb4full;
    mixed ^= mixed >> 29;
    mixed *= 0xbf58476d1ce4e5b9ull;
    return (uint8_t)(1 + (mixed >> 32) % 255);
}
/* `length` bytes of written_byte(number, offset ...) into `buffer`. */
void written_bytes(uint32_t operation_number, uint64_t offset, uint64_t length, uint8_t *buffer);

/* The model of the file (model.c): its bytes and size; bytes at or past the
 * size are 0 (what a hole or an extension reads as). */
struct model {
    uint8_t *bytes; /* max_file_bytes */
    uint64_t size;
    uint64_t max_file_bytes;
};
bool model_start(struct model *model, uint64_t max_file_bytes);
/* What `operation` does to the file, done to the model. */
void model_apply(struct model *model, const struct operation *operation);
/* The bytes of [offset, offset + length) a read returns: the count. */
static inline uint64_t model_read_count(const struct model *model, uint64_t offset, uint64_t length)
{
    if (offset >= model->size)
        return 0;
    return length < model->size - offset ? length : model->size - offset;
}

/* The window a reader's read happened in (window.c): the file as it was
 * after `first` of the writer's operations (the model), and the ones that
 * may have run during the read (numbers first + 1 ... first + count). A byte
 * the reader saw is right when the file held it at that offset after one of
 * them (or before them all); a short count when the file ended there at
 * one of those times. */
struct window {
    const struct model *before;
    const struct operation *operations;
    uint32_t count;
};
/* True when some state of the window has `value` at `offset`, inside the file. */
bool window_allows_byte(const struct window *window, uint64_t offset, uint8_t value);
/* The same for a byte of a lent block, the cache's page itself: it may also
 * be a 0 at an offset some state of the window had past the file's end (a
 * truncate zeroes the rest of the last block in place). */
bool window_allows_page_byte(const struct window *window, uint64_t offset, uint8_t value);
/* True when `got` bytes of a read of `length` at `offset` is a count the
 * window allows: at most `length`, and short only where the file ended at
 * one of its times. */
bool window_allows_count(const struct window *window, uint64_t offset, uint64_t length,
                         uint64_t got);
/* True when `size` was the file's size at one of the window's times. */
bool window_allows_size(const struct window *window, uint64_t size);
/* The first offset of [offset, offset + length) whose byte in `data` the
 * window does not allow (`as_page`: as a lent block's), or UINT64_MAX when
 * it allows them all. */
uint64_t window_first_wrong_byte(const struct window *window, uint64_t offset, const uint8_t *data,
                                 uint64_t length, bool as_page);

/* The log of recent operations (history.c), printed on a mismatch. */
#define HISTORY_OPERATIONS 48u
void history_add(const struct operation *operation);
/* "pwrite 0x1200+300" etc. */
void operation_describe(const struct operation *operation, char *buffer, size_t size);
const char *operation_kind_name(uint8_t kind);
/* Prints the last operations logged, oldest first, and how to replay. */
void history_print_tail(const struct exerciser_options *options);

/* A mismatch: the @json line and the first differing byte. */
void report_mismatch(const char *side, const struct exerciser_options *options,
                     const struct operation *operation, const char *what, uint64_t offset,
                     long expected, long got);

/* The writer (writer.c): runs every operation, with a reader if asked;
 * the exit code. The reader (reader.c): its writer's file through its own
 * FS instance; the exit code. */
int writer_run(const struct exerciser_options *options);
int reader_run(const struct exerciser_options *options);
