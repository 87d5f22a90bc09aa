/* operation_log.h: the FS owner's operation log in its published region
 * (docs/storage.md, "FS replicas"): a ring of (sequence, block) records,
 * "this block changed", images of the blocks the owner's running ext3
 * transaction holds (not yet in BLK), each guarded by a sequence lock, and
 * marks of the file data it writes into BLK in place. The owner writes
 * (operation_log_writer), replicas read (operation_log_reader).
 * Freestanding, host-tested. */
#pragma once
#include "journal.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define OPERATION_LOG_MAGIC 0x33474f4c53504f46ull /* "FOPSLOG3" */
#define OPERATION_LOG_RECORDS 4096u               /* a power of two */
/* Images: more than a transaction holds (JOURNAL_TRANSACTION_BLOCKS), so a
 * free one is always found among the blocks already home. */
#define OPERATION_LOG_IMAGES 768u
#define OPERATION_LOG_IMAGE_BYTES EXT2_MAX_BLOCK_SIZE
#define OPERATION_LOG_NO_IMAGE UINT32_MAX
#define OPERATION_LOG_INDEX_CAPACITY 2048u /* block -> image sets: a power of two, 3/4 > images */
/* Data marks: one per set of blocks, by block number modulo this (a power of two). */
#define OPERATION_LOG_DATA_MARKS 4096u

/* What a record says about its block. */
enum operation_kind {
    OPERATION_METADATA = 1, /* a metadata block (inode, directory, map, bitmap) changed */
    OPERATION_DATA = 2,     /* a file's contents changed (in place, or logged) */
    OPERATION_RESET = 3,    /* a new owner: every cached block may be stale */
    OPERATION_TIMES = 4,    /* an inode table block whose inodes changed only their times */
    OPERATION_FREED = 5, /* freed: no view older than this record may read it (its image stays) */
};

struct operation_record {
    _Atomic uint64_t sequence; /* 0 while being written */
    _Atomic uint32_t block;
    _Atomic uint32_t image; /* the image slot holding it, or OPERATION_LOG_NO_IMAGE */
    _Atomic uint32_t kind;  /* enum operation_kind */
    uint32_t reserved;
};

struct operation_image {
    _Atomic uint64_t version;        /* odd while the owner rewrites it */
    _Atomic uint64_t sequence;       /* the record that wrote these bytes */
    _Atomic uint32_t block_plus_one; /* 0: empty */
    uint32_t reserved[11];           /* the bytes start on a cache line */
    uint8_t bytes[OPERATION_LOG_IMAGE_BYTES];
};

struct operation_log {
    uint64_t magic;
    /* The next record's sequence as replicas see it: records below are
     * published, a whole owner's request at a time (operation_log_make_visible). */
    _Atomic uint64_t tail;
    uint64_t owner_starts; /* owners that took the log: 1 after the first */
    /* A view below this may find in BLK metadata of a request not done yet
     * (operation_log_note_unfinished); 0: none. */
    _Atomic uint64_t unfinished;
    uint8_t reserved[32];
    /* A view below data_written[b % OPERATION_LOG_DATA_MARKS] may find in
     * BLK file data of block b it does not hold
     * (operation_log_note_data_write); 0: none. */
    _Atomic uint64_t data_written[OPERATION_LOG_DATA_MARKS];
    struct operation_record records[OPERATION_LOG_RECORDS];
    struct operation_image images[OPERATION_LOG_IMAGES];
};

/* The owner's side: which image slot holds which block. */
struct operation_log_writer {
    struct operation_log *log;
    uint64_t next; /* the next record's sequence; tail lags until the request is done */
    uint32_t block_size;
    uint32_t hand; /* where the search for a free image starts */
    /* Whether a block's newest contents are still not in BLK (the journal's
     * running transaction holds it): its image must stay. */
    bool (*held)(void *context, uint32_t block);
    void *held_context;
    struct block_set index; /* block -> image slot */
    uint32_t index_keys[OPERATION_LOG_INDEX_CAPACITY];
    uint32_t index_values[OPERATION_LOG_INDEX_CAPACITY];
    uint32_t slot_block[OPERATION_LOG_IMAGES]; /* UINT32_MAX: empty */
};

/* Takes the log for a new owner: an unknown one (a fresh region) is
 * initialised, a known one (the previous owner's, kept by a replica)
 * continues its sequence; every image is emptied (the new owner's mount put
 * everything in BLK) and a RESET record tells the replicas. */
void operation_log_writer_start(struct operation_log_writer *writer, struct operation_log *log,
                                uint32_t block_size, bool (*held)(void *context, uint32_t block),
                                void *held_context);
/* Block `block` was written with `bytes` (NULL: changed in BLK by someone
 * else, a BLK_PATCH): its image is rewritten while held() says BLK does
 * not have it yet, else dropped; then its record is published (a release
 * store of the tail). 0, or -E_NO_SPACE when no image is free (logged by
 * the caller; then the record says the block changed without an image). */
int operation_log_publish(struct operation_log_writer *writer, uint32_t block,
                          enum operation_kind kind, const void *bytes);
/* Block `block` was freed: a record says so (before it can be handed out
 * again), its image left as it is. */
void operation_log_note_freed(struct operation_log_writer *writer, uint32_t block);
/* The records written since the last call become visible to replicas at
 * once (a release store of the tail): the owner calls it when its request
 * is done, before the answer, so a replica's view never holds part of a
 * request (a block linked into a file before its contents are written). */
static inline void operation_log_make_visible(struct operation_log_writer *writer)
{
    atomic_store_explicit(&writer->log->tail, writer->next, memory_order_release);
}
/* The request under way is about to write metadata into BLK itself (ext2
 * writes it home at once; a transaction outgrown commits in the middle of
 * a request): a view taken before the request is done must not read
 * metadata from BLK (operation_log_unfinished_after_view). The record of
 * the write follows, so every view taken after the request is done is past
 * the mark (after a write that failed, once the owner's next record is).
 * A full barrier: the mark before anything of the write. */
static inline void operation_log_note_unfinished(struct operation_log_writer *writer)
{
    atomic_store_explicit(&writer->log->unfinished, writer->next + 1, memory_order_seq_cst);
}
static inline uint32_t operation_log_data_mark_of(uint32_t block)
{
    return block & (OPERATION_LOG_DATA_MARKS - 1);
}
/* The owner is about to write file data of block `block` into BLK in
 * place (a write, a truncate's zeroed tail, a small write's BLK_PATCH), or
 * into the journal, which may take it home before the request is done: a
 * view taken before the request is done must not use bytes of the block
 * read from BLK (operation_log_data_written_after_view), which may be newer
 * than the inode's size and map it has. The record of the write follows,
 * so every view taken after the request is done is past the mark. A full
 * barrier: the mark before anything of the write. */
static inline void operation_log_note_data_write(struct operation_log_writer *writer,
                                                 uint32_t block)
{
    atomic_store_explicit(&writer->log->data_written[operation_log_data_mark_of(block)],
                          writer->next + 1, memory_order_seq_cst);
}
/* True when records wait for operation_log_make_visible. */
static inline bool operation_log_has_unseen(const struct operation_log_writer *writer)
{
    return writer->next != atomic_load_explicit(&writer->log->tail, memory_order_relaxed);
}

/* A replica's side: the records applied and its own index of the images. */
struct operation_log_reader {
    const struct operation_log *log;
    uint32_t block_size;
    uint64_t applied; /* the next record to apply */
    /* Told of each changed block (what the replica caches from it goes),
     * and of everything (a new owner, or the replica fell a ring behind). */
    void (*forget_block)(void *context, uint32_t block, enum operation_kind kind);
    void (*forget_everything)(void *context);
    void *context;
    struct block_set index; /* block -> image slot */
    uint32_t index_keys[OPERATION_LOG_INDEX_CAPACITY];
    uint32_t index_values[OPERATION_LOG_INDEX_CAPACITY];
    uint32_t slot_block[OPERATION_LOG_IMAGES];
    uint64_t rebuilds; /* times it started over from the images */
};

/* Prepares a reader; the first catch-up starts it over (every image read). */
void operation_log_reader_init(struct operation_log_reader *reader, const struct operation_log *log,
                               uint32_t block_size,
                               void (*forget_block)(void *, uint32_t, enum operation_kind),
                               void (*forget_everything)(void *), void *context);
/* True once an owner has taken the log (a replica waits for it). */
bool operation_log_ready(const struct operation_log *log);
/* operation_log_catch_up when there are records to apply (apart). */
void operation_log_apply(struct operation_log_reader *reader, uint64_t tail);
/* Applies what the owner published since the last call. Inline: before
 * each request, one load when nothing changed. */
static inline void operation_log_catch_up(struct operation_log_reader *reader)
{
    uint64_t tail = atomic_load_explicit(&reader->log->tail, memory_order_acquire);
    if (tail != reader->applied)
        operation_log_apply(reader, tail);
}
/* True when an image holds the block (its newest contents may not be in BLK). */
static inline bool operation_log_holds(const struct operation_log_reader *reader, uint32_t block)
{
    return reader->index.count != 0 && block_set_contains(&reader->index, block);
}
/* After a read of metadata from BLK: true when the owner may have written
 * metadata of a request the reader's view does not hold into BLK (then
 * the bytes read may show part of it: a block linked into a file before
 * its contents are written). Asked after the read: a write the read saw
 * was marked before it reached BLK. */
static inline bool operation_log_unfinished_after_view(const struct operation_log_reader *reader)
{
    atomic_thread_fence(memory_order_acquire); /* the read's bytes before the mark */
    return atomic_load_explicit(&reader->log->unfinished, memory_order_relaxed) > reader->applied;
}
/* After a read of file data of block `block` from BLK: true when the owner
 * may have written that block (or one sharing its mark) after the reader's
 * view, so the bytes read may be newer than the view's size and map of the
 * file (a truncate's zeroed tail beside the old size). Asked after the
 * read: a write the read saw was marked before it reached BLK. */
static inline bool operation_log_data_written_after_view(const struct operation_log_reader *reader,
                                                         uint32_t block)
{
    atomic_thread_fence(memory_order_acquire); /* the read's bytes before the mark */
    uint32_t mark = operation_log_data_mark_of(block);
    return atomic_load_explicit(&reader->log->data_written[mark], memory_order_relaxed) >
           reader->applied;
}
/* What operation_log_read found. */
enum operation_image_read {
    OPERATION_IMAGE_NONE,   /* no image holds the block now: BLK has its newest contents */
    OPERATION_IMAGE_COPIED, /* copied, as the reader's view has it */
    OPERATION_IMAGE_NEWER,  /* the owner rewrote it after the view: look again as of a newer one */
};
/* Copies `length` bytes at `offset` of block `block` from its image, if the
 * image is as the reader's view (records below `applied`) has it. Never
 * torn: a copy the owner rewrote meanwhile is taken again. */
enum operation_image_read operation_log_read(const struct operation_log_reader *reader,
                                             uint32_t block, uint32_t offset, void *buffer,
                                             uint32_t length);
