/* operation_log.c: the FS owner's operation log (operation_log.h): the
 * owner's images and records, each published with a release store, its
 * marks brought down when a new owner starts, and a replica's catch-up,
 * index and sequence-locked image reads. */
#include "operation_log.h"
#include <formica/errors.h>
#include <string.h>

#define EMPTY_SLOT UINT32_MAX

/* Rewrites `image` for the record `sequence` (the next one: written just after). */
static void image_write(struct operation_image *image, uint32_t block_plus_one, const void *bytes,
                        uint32_t length, uint64_t sequence)
{
    uint64_t version = atomic_load_explicit(&image->version, memory_order_relaxed);
    atomic_store_explicit(&image->version, version + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* odd before anything else changes */
    atomic_store_explicit(&image->sequence, sequence, memory_order_relaxed);
    atomic_store_explicit(&image->block_plus_one, block_plus_one, memory_order_relaxed);
    if (bytes != NULL)
        memcpy(image->bytes, bytes, length);
    atomic_store_explicit(&image->version, version + 2, memory_order_release);
}

/* A record, visible to replicas once operation_log_make_visible publishes
 * the tail past it. */
static void record_append(struct operation_log_writer *writer, uint32_t block, uint32_t image,
                          enum operation_kind kind)
{
    uint64_t sequence = writer->next++;
    struct operation_record *record = &writer->log->records[sequence % OPERATION_LOG_RECORDS];
    atomic_store_explicit(&record->sequence, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* readers of the old record see it go */
    atomic_store_explicit(&record->block, block, memory_order_relaxed);
    atomic_store_explicit(&record->image, image, memory_order_relaxed);
    atomic_store_explicit(&record->kind, (uint32_t)kind, memory_order_relaxed);
    atomic_store_explicit(&record->sequence, sequence, memory_order_release);
}

/* Data marks a last owner left past its visible records (its unfinished
 * request's data in BLK) come down to `limit`, the RESET's: views before
 * the RESET still do not use that data, views after it do (it is the
 * file's now, as after a crash in ordered mode). */
static void lower_data_marks(struct operation_log *log, uint64_t limit)
{
    for (uint32_t i = 0; i < OPERATION_LOG_DATA_MARKS; i++)
        if (atomic_load_explicit(&log->data_written[i], memory_order_relaxed) > limit)
            atomic_store_explicit(&log->data_written[i], limit, memory_order_relaxed);
}

void operation_log_writer_start(struct operation_log_writer *writer, struct operation_log *log,
                                uint32_t block_size, bool (*held)(void *context, uint32_t block),
                                void *held_context)
{
    writer->log = log;
    writer->block_size = block_size;
    writer->hand = 0;
    writer->held = held;
    writer->held_context = held_context;
    block_set_init(&writer->index, writer->index_keys, writer->index_values,
                   OPERATION_LOG_INDEX_CAPACITY);
    for (uint32_t i = 0; i < OPERATION_LOG_IMAGES; i++)
        writer->slot_block[i] = EMPTY_SLOT;
    if (log->magic != OPERATION_LOG_MAGIC) {
        memset(log, 0, sizeof *log);
        log->magic = OPERATION_LOG_MAGIC;
        atomic_store_explicit(&log->tail, 1, memory_order_relaxed); /* sequence 0 means "none" */
    }
    log->owner_starts++;
    writer->next = atomic_load_explicit(&log->tail, memory_order_relaxed);
    for (uint32_t i = 0; i < OPERATION_LOG_IMAGES; i++)
        if (atomic_load_explicit(&log->images[i].block_plus_one, memory_order_relaxed) != 0)
            image_write(&log->images[i], 0, NULL, 0, writer->next);
    /* BLK may hold part of a request the last owner never finished: views
     * before the RESET read no metadata from it; a mark the last owner left
     * past its visible records (its unfinished request's) comes down */
    operation_log_note_unfinished(writer);
    lower_data_marks(log, writer->next + 1);
    record_append(writer, 0, OPERATION_LOG_NO_IMAGE, OPERATION_RESET);
    operation_log_make_visible(writer);
}

/* Forgets which block image `slot` held (the image itself is rewritten by
 * the caller). */
static void slot_release(struct operation_log_writer *writer, uint32_t slot)
{
    if (writer->slot_block[slot] != EMPTY_SLOT)
        block_set_remove(&writer->index, writer->slot_block[slot]);
    writer->slot_block[slot] = EMPTY_SLOT;
}

/* An image slot whose block BLK has (or none held one): found from the hand on. */
static uint32_t slot_take(struct operation_log_writer *writer)
{
    for (uint32_t tried = 0; tried < OPERATION_LOG_IMAGES; tried++) {
        uint32_t slot = writer->hand;
        writer->hand = (writer->hand + 1) % OPERATION_LOG_IMAGES;
        uint32_t block = writer->slot_block[slot];
        if (block == EMPTY_SLOT || !writer->held(writer->held_context, block)) {
            slot_release(writer, slot);
            return slot;
        }
    }
    return EMPTY_SLOT;
}

/* The image of `block` dropped (BLK has its newest contents). */
static void image_drop(struct operation_log_writer *writer, uint32_t block)
{
    uint32_t found = block_set_find(&writer->index, block);
    if (found == UINT32_MAX)
        return;
    uint32_t slot = writer->index.values[found];
    slot_release(writer, slot);
    image_write(&writer->log->images[slot], 0, NULL, 0, writer->next);
}

int operation_log_publish(struct operation_log_writer *writer, uint32_t block,
                          enum operation_kind kind, const void *bytes)
{
    if (bytes == NULL || !writer->held(writer->held_context, block)) {
        image_drop(writer, block);
        record_append(writer, block, OPERATION_LOG_NO_IMAGE, kind);
        return 0;
    }
    uint32_t found = block_set_find(&writer->index, block);
    uint32_t slot = found != UINT32_MAX ? writer->index.values[found] : slot_take(writer);
    if (slot == EMPTY_SLOT) {
        record_append(writer, block, OPERATION_LOG_NO_IMAGE, kind);
        return -E_NO_SPACE;
    }
    if (found == UINT32_MAX) {
        block_set_put(&writer->index, block, slot);
        writer->slot_block[slot] = block;
    }
    image_write(&writer->log->images[slot], block + 1, bytes, writer->block_size, writer->next);
    record_append(writer, block, slot, kind);
    return 0;
}

void operation_log_note_freed(struct operation_log_writer *writer, uint32_t block)
{
    record_append(writer, block, OPERATION_LOG_NO_IMAGE, OPERATION_FREED);
}

bool operation_log_ready(const struct operation_log *log)
{
    return log->magic == OPERATION_LOG_MAGIC &&
           atomic_load_explicit(&log->tail, memory_order_acquire) > 1;
}

void operation_log_reader_init(struct operation_log_reader *reader, const struct operation_log *log,
                               uint32_t block_size,
                               void (*forget_block)(void *, uint32_t, enum operation_kind),
                               void (*forget_everything)(void *), void *context)
{
    memset(reader, 0, sizeof *reader);
    reader->log = log;
    reader->block_size = block_size;
    reader->forget_block = forget_block;
    reader->forget_everything = forget_everything;
    reader->context = context;
    block_set_init(&reader->index, reader->index_keys, reader->index_values,
                   OPERATION_LOG_INDEX_CAPACITY);
    for (uint32_t i = 0; i < OPERATION_LOG_IMAGES; i++)
        reader->slot_block[i] = EMPTY_SLOT;
}

/* The reader's index says image `slot` holds `block` (EMPTY_SLOT: nothing). */
static void index_set(struct operation_log_reader *reader, uint32_t slot, uint32_t block)
{
    uint32_t previous = reader->slot_block[slot];
    if (previous != EMPTY_SLOT)
        block_set_remove(&reader->index, previous);
    reader->slot_block[slot] = block;
    if (block != EMPTY_SLOT)
        block_set_put(&reader->index, block, slot);
}

/* Which block an image holds now (EMPTY_SLOT: none), read whole. */
static uint32_t image_block(const struct operation_image *image)
{
    for (;;) {
        uint64_t before = atomic_load_explicit(&image->version, memory_order_acquire);
        uint32_t plus_one = atomic_load_explicit(&image->block_plus_one, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if ((before & 1) == 0 &&
            atomic_load_explicit(&image->version, memory_order_relaxed) == before)
            return plus_one == 0 ? EMPTY_SLOT : plus_one - 1;
    }
}

/* Starts over: everything cached goes, the index is read from the images.
 * The tail is read first, so a change after it is applied next time. */
static void rebuild(struct operation_log_reader *reader, uint64_t tail)
{
    reader->rebuilds++;
    reader->forget_everything(reader->context);
    block_set_clear(&reader->index);
    for (uint32_t slot = 0; slot < OPERATION_LOG_IMAGES; slot++) {
        reader->slot_block[slot] = EMPTY_SLOT;
        uint32_t block = image_block(&reader->log->images[slot]);
        if (block != EMPTY_SLOT && !block_set_contains(&reader->index, block))
            index_set(reader, slot, block);
    }
    reader->applied = tail;
}

/* Reads record `sequence` whole: false when the owner has written over it
 * (the reader fell a ring behind). */
static bool record_read(const struct operation_log *log, uint64_t sequence, uint32_t *block,
                        uint32_t *image, uint32_t *kind)
{
    const struct operation_record *record = &log->records[sequence % OPERATION_LOG_RECORDS];
    if (atomic_load_explicit(&record->sequence, memory_order_acquire) != sequence)
        return false;
    *block = atomic_load_explicit(&record->block, memory_order_relaxed);
    *image = atomic_load_explicit(&record->image, memory_order_relaxed);
    *kind = atomic_load_explicit(&record->kind, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&record->sequence, memory_order_relaxed) == sequence;
}

void operation_log_apply(struct operation_log_reader *reader, uint64_t tail)
{
    if (reader->applied == 0 || tail < reader->applied ||
        tail - reader->applied > OPERATION_LOG_RECORDS) {
        rebuild(reader, tail); /* the first look, a new log, or a ring behind */
        return;
    }
    for (uint64_t sequence = reader->applied; sequence < tail; sequence++) {
        uint32_t block, image, kind;
        if (!record_read(reader->log, sequence, &block, &image, &kind) || kind == OPERATION_RESET ||
            (image != OPERATION_LOG_NO_IMAGE && image >= OPERATION_LOG_IMAGES)) {
            rebuild(reader, tail);
            return;
        }
        uint32_t found = block_set_find(&reader->index, block);
        if (kind != OPERATION_FREED && found != UINT32_MAX)
            index_set(reader, reader->index.values[found], EMPTY_SLOT);
        if (image != OPERATION_LOG_NO_IMAGE)
            index_set(reader, image, block);
        reader->forget_block(reader->context, block, (enum operation_kind)kind);
    }
    reader->applied = tail;
}

enum operation_image_read operation_log_read(const struct operation_log_reader *reader,
                                             uint32_t block, uint32_t offset, void *buffer,
                                             uint32_t length)
{
    uint32_t found = block_set_find(&reader->index, block);
    if (found == UINT32_MAX || offset > OPERATION_LOG_IMAGE_BYTES ||
        length > OPERATION_LOG_IMAGE_BYTES - offset)
        return OPERATION_IMAGE_NONE;
    const struct operation_image *image = &reader->log->images[reader->index.values[found]];
    for (;;) {
        uint64_t before = atomic_load_explicit(&image->version, memory_order_acquire);
        if (before & 1)
            continue; /* the owner is rewriting it */
        bool holds =
            atomic_load_explicit(&image->block_plus_one, memory_order_relaxed) == block + 1;
        bool newer =
            atomic_load_explicit(&image->sequence, memory_order_relaxed) >= reader->applied;
        if (holds && !newer)
            memcpy(buffer, image->bytes + offset, length);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&image->version, memory_order_relaxed) != before)
            continue;
        if (!holds)
            return OPERATION_IMAGE_NONE;
        return newer ? OPERATION_IMAGE_NEWER : OPERATION_IMAGE_COPIED;
    }
}
