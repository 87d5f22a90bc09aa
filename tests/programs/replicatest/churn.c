/* churn.c: `replicatest churn WRITER_CORE READER_CORE ROUNDS`: a writer
 * that rewrites one file, truncates it somewhere and extends it again
 * (a hole) round after round, and a reader on another core (through its own
 * FS instance), told after each round, that reads every block with
 * readblock (one block lent, four lent) and pread. Every 8-byte word names
 * its offset and round, so the reader checks each exactly: the round's
 * words below the truncation, zeros above, never the bytes of a block an
 * earlier truncate freed. Then as many rounds with the reader holding a
 * lent answer of the file's last blocks across each, and as many again
 * without waiting, the reader reading meanwhile and looking at each lent
 * answer twice: only zeros and words of their own offset (docs/storage.md,
 * "FS replicas"). */
#include "replicatest.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHURN_PATH "/replicatest/churn"
#define CHURN_BLOCKS 48u /* past the 12 direct blocks: an indirect block is freed and taken too */
#define CHURN_BYTES (CHURN_BLOCKS * STORAGE_BLOCK_BYTES)
#define WRITE_PIECE (64u * 1024)
#define MISMATCHES_SHOWN 4u
#define CHURN_DONE "/replicatest/churn.done"
#define HOLD_MS 2u /* how long the concurrent reader keeps a lent block before it looks again */

static uint64_t words[WRITE_PIECE / 8];
static long reader_pid; /* the writer's reader (churn_held tells it) */

/* The word round `round` writes at byte `offset` (a multiple of 8). */
static uint64_t churn_word(uint32_t round, uint64_t offset)
{
    return (uint64_t)round << 32 | (offset / 8 + 1);
}

/* The round's bytes over the whole file, then fsync (the commit lets the
 * next truncate's blocks be taken again). Odd rounds write block by block
 * from the end, so the blocks a truncate freed come back at other offsets. */
static long write_round(int fd, uint32_t round)
{
    bool backwards = round % 2 == 1;
    uint64_t piece = backwards ? STORAGE_BLOCK_BYTES : WRITE_PIECE;
    for (uint64_t done = 0; done < CHURN_BYTES; done += piece) {
        uint64_t at = backwards ? CHURN_BYTES - piece - done : done;
        for (uint64_t i = 0; i < piece / 8; i++)
            words[i] = churn_word(round, at + i * 8);
        long written = pwrite(fd, words, piece, at);
        if (written != (long)piece)
            return written < 0 ? written : -E_IO;
    }
    return fsync(fd);
}

/* Where round `round` truncates the file (a multiple of 8, anywhere in it). */
static uint64_t kept_bytes(uint32_t round)
{
    return ((uint64_t)(round * 7919u % CHURN_BLOCKS) * STORAGE_BLOCK_BYTES + 8 * round) %
           CHURN_BYTES;
}

/* Truncated somewhere inside (freeing the blocks past it, the indirect one
 * too when it falls below block 12), extended again: a hole. */
static long truncate_round(int fd, uint32_t round)
{
    long error = ftruncate(fd, kept_bytes(round));
    if (error == 0)
        error = ftruncate(fd, CHURN_BYTES);
    return error == 0 ? fsync(fd) : error;
}

struct reader_counts {
    uint64_t reads, words, mismatches, errors;
    long first_error;
};

/* The words of `bytes` read at file offset `offset` after round `round`:
 * the round's below where it truncated, zeros (the hole) above. */
static void check_words(const uint8_t *bytes, uint64_t count, uint64_t offset, uint32_t round,
                        struct reader_counts *counts)
{
    uint64_t kept = kept_bytes(round);
    for (uint64_t at = 0; at + 8 <= count; at += 8) {
        uint64_t word, place = offset + at;
        memcpy(&word, bytes + at, sizeof word);
        counts->words++;
        if (word == (place < kept ? churn_word(round, place) : 0))
            continue;
        if (counts->mismatches++ < MISMATCHES_SHOWN)
            printf("@json {\"kind\":\"churn_mismatch\",\"round\":%u,\"offset\":%lu,"
                   "\"kept\":%lu,\"word\":%lu}\n",
                   round, (unsigned long)place, (unsigned long)kept, (unsigned long)word);
    }
}

static void note_error(long result, struct reader_counts *counts)
{
    if (counts->errors++ == 0)
        counts->first_error = result;
}

/* Block `block` read one way: one block lent, four blocks, or pread. */
static void read_block(int fd, uint64_t block, uint32_t way, uint32_t round,
                       struct reader_counts *counts)
{
    static uint8_t buffer[STORAGE_BLOCK_BYTES];
    const void *data = NULL;
    long result;
    uint64_t first = way == 1 ? block & ~3ull : block;
    counts->reads++;
    if (way == 0) {
        result = readblock(fd, 1, first, &data);
    } else if (way == 1) {
        result = readblock(fd, 4, first, &data);
    } else {
        result = pread(fd, buffer, sizeof buffer, first * STORAGE_BLOCK_BYTES);
        data = buffer;
    }
    if (result < 0)
        note_error(result, counts);
    else if (result > 0)
        check_words(data, (uint64_t)result, first * STORAGE_BLOCK_BYTES, round, counts);
}

/* The words of a block read at `offset` while the writer goes on: zeros,
 * or words of their own offset (any round); a word of another offset is a
 * freed block's that a later round put elsewhere. */
static void check_own_words(const uint8_t *bytes, uint64_t count, uint64_t offset, uint32_t look,
                            struct reader_counts *counts)
{
    for (uint64_t at = 0; at + 8 <= count; at += 8) {
        uint64_t word, place = offset + at;
        memcpy(&word, bytes + at, sizeof word);
        counts->words++;
        if (word == 0 || (word & 0xffffffffu) == place / 8 + 1)
            continue;
        if (counts->mismatches++ < MISMATCHES_SHOWN)
            printf("@json {\"kind\":\"churn_mismatch\",\"round\":0,\"offset\":%lu,"
                   "\"look\":%u,\"word\":%lu}\n",
                   (unsigned long)place, look, (unsigned long)word);
    }
}

static bool done_marked(void)
{
    struct file_status status;
    return stat(CHURN_DONE, &status) == 0;
}

/* While the writer goes on: random blocks, each way; a lent answer is
 * looked at again HOLD_MS later (its lend lasts until the next request). */
static void read_concurrently(int fd, struct reader_counts *counts)
{
    static uint8_t buffer[STORAGE_BLOCK_BYTES];
    for (uint64_t i = 0; !done_marked(); i++) {
        uint32_t way = (uint32_t)(i % 3);
        uint64_t block = (i * 2654435761u >> 7) % CHURN_BLOCKS;
        if (way == 1)
            block &= ~3ull;
        const void *data = buffer;
        counts->reads++;
        long result = way == 2 ? pread(fd, buffer, sizeof buffer, block * STORAGE_BLOCK_BYTES)
                               : readblock(fd, way == 0 ? 1 : 4, block, &data);
        if (result < 0) {
            note_error(result, counts);
            continue;
        }
        check_own_words(data, (uint64_t)result, block * STORAGE_BLOCK_BYTES, 1, counts);
        if (way == 2)
            continue;
        sleep_ms(HOLD_MS);
        check_own_words(data, (uint64_t)result, block * STORAGE_BLOCK_BYTES, 2, counts);
    }
}

/* A raw FS_OPEN (read only) of the churned file: FS's handle, for
 * readblocks on control ICAs of the reader's own. */
static long raw_open(long fs, uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    request_prepare(control, FS_OPEN);
    *fs_open_of(page) = (struct fs_open_message){.flags = FS_OPEN_READ};
    memcpy(page->payload, CHURN_PATH, sizeof CHURN_PATH);
    return request_call(fs, control);
}

/* A one-block lend-only readblock of `block` on `control` (its earlier lend
 * ends): the lent block, or NULL. */
static const uint8_t *raw_readblock(long fs, uint64_t control, uint64_t handle, uint64_t block,
                                    struct reader_counts *counts)
{
    struct ica_control *page = ica_control_of(control);
    request_prepare(control, FS_READBLOCK);
    *fs_readblock_of(page) =
        (struct fs_readblock_message){.handle = handle, .first_block = block, .blocks = 1};
    long result = request_call(fs, control);
    counts->reads++;
    if (result < 0 && result != -E_NEEDS_DATA && result != -E_STALE)
        note_error(result, counts); /* not lent (copied, or a replica's view too old): skipped */
    return result == STORAGE_BLOCK_BYTES && page->lent_count == 1 ? ica_address(page->lent[0])
                                                                  : NULL;
}

#define HELD_BLOCKS 4u /* the file's last blocks, each held on its own control ICA */

/* Rounds `first`.. `first + rounds - 1`, one at a time: the file's last
 * blocks read lent (each on a control ICA of its own, so the lends last)
 * and held while the writer truncates below them, extends and rewrites the
 * file, then looked at again: a freed block the round gave to another
 * offset must not show there. */
static void hold_across_rounds(long writer, uint32_t first, uint32_t rounds,
                               struct reader_counts *counts)
{
    long fs = server_wait_for(SERVER_NAME_FS, 30000);
    uint64_t controls[HELD_BLOCKS];
    for (uint32_t i = 0; i < HELD_BLOCKS; i++) {
        long id = ica_allocate(ICA_KIND_CONTROL, 4096);
        controls[i] = id < 0 ? 0 : (uint64_t)id;
    }
    long handle = fs < 0 || controls[0] == 0 ? -E_NOT_FOUND : raw_open(fs, controls[0]);
    if (handle < 0)
        note_error(handle, counts);
    uint64_t last = CHURN_BLOCKS - HELD_BLOCKS;
    for (uint32_t round = first; round < first + rounds; round++) {
        const uint8_t *held[HELD_BLOCKS] = {0};
        for (uint32_t i = 0; i < HELD_BLOCKS && handle >= 0 && controls[i] != 0; i++)
            held[i] = raw_readblock(fs, controls[i], (uint64_t)handle, last + i, counts);
        notify(writer);
        await_notification(); /* the round is done; the blocks are still lent */
        for (uint32_t i = 0; i < HELD_BLOCKS; i++)
            if (held[i] != NULL)
                check_own_words(held[i], STORAGE_BLOCK_BYTES, (last + i) * STORAGE_BLOCK_BYTES, 3,
                                counts);
    }
}

/* After each round: every block, each way, in an order that moves. */
int churn_reader(long writer, uint32_t rounds)
{
    int fd = open(CHURN_PATH, O_RDONLY);
    if (fd < 0)
        return report("reader", "churn_open", 0, false, fd) ? 0 : 1;
    struct reader_counts counts = {0};
    for (uint32_t round = 1; round <= rounds; round++) {
        await_notification();
        for (uint32_t way = 0; way < 3; way++)
            for (uint64_t i = 0; i < CHURN_BLOCKS; i++)
                read_block(fd, (i * 7 + round) % CHURN_BLOCKS, way, round, &counts);
        notify(writer);
    }
    hold_across_rounds(writer, rounds + 1, rounds, &counts);
    read_concurrently(fd, &counts);
    close(fd);
    printf("@json {\"kind\":\"churn_reader\",\"core\":%ld,\"reads\":%lu,\"words\":%lu,"
           "\"mismatches\":%lu,\"errors\":%lu,\"first_error\":%ld}\n",
           core_id(), (unsigned long)counts.reads, (unsigned long)counts.words,
           (unsigned long)counts.mismatches, (unsigned long)counts.errors, counts.first_error);
    return counts.mismatches == 0 && counts.errors == 0 ? 0 : 1;
}

/* Rounds `first`.. while the reader holds an answer across each (it says
 * when it holds one, and is told when the round is done). */
static long churn_held(int fd, uint32_t first, uint32_t rounds)
{
    long error = 0;
    for (uint32_t round = first; round < first + rounds; round++) {
        await_notification();
        if (error >= 0)
            error = truncate_round(fd, round);
        if (error >= 0)
            error = write_round(fd, round);
        notify(reader_pid);
    }
    return error;
}

/* Rounds `first`.. without waiting for the reader, then the mark that ends
 * its reading. */
static long churn_concurrently(int fd, uint32_t first, uint32_t rounds)
{
    long error = 0;
    for (uint32_t round = first; round < first + rounds && error >= 0; round++) {
        error = write_round(fd, round);
        if (error >= 0)
            error = truncate_round(fd, round);
    }
    int mark = open(CHURN_DONE, O_CREAT | O_WRONLY);
    if (mark >= 0)
        close(mark);
    return error;
}

int churn_writer(uint32_t reader_core, uint32_t rounds)
{
    long made = mkdir("/replicatest");
    if (made != 0 && made != -E_EXISTS)
        return report("writer", "mkdir", 0, false, made) ? 0 : 1;
    unlink(CHURN_DONE);
    int fd = open(CHURN_PATH, O_CREAT | O_TRUNC | O_RDWR);
    if (fd < 0)
        return report("writer", "churn_create", 0, false, fd) ? 0 : 1;
    char arguments[48];
    snprintf(arguments, sizeof arguments, "--churn-reader %ld %u", process_id(), rounds);
    long reader = spawn("replicatest", arguments, reader_core, PRIORITY_APPLICATION);
    if (reader < 0)
        return report("writer", "reader_started", 0, false, reader) ? 0 : 1;
    long error = 0;
    for (uint32_t round = 1; round <= rounds; round++) {
        if (error >= 0)
            error = write_round(fd, round);
        if (error >= 0)
            error = truncate_round(fd, round);
        notify(reader);
        await_notification(); /* the reader has read the round */
    }
    reader_pid = reader;
    if (error >= 0)
        error = write_round(fd, rounds + 1); /* whole again: the held rounds read lent blocks */
    long held = churn_held(fd, rounds + 1, rounds);
    long concurrent = churn_concurrently(fd, 2 * rounds + 1, rounds);
    if (error >= 0)
        error = held < 0 ? held : concurrent;
    close(fd);
    int code = -1;
    wait_process(reader, &code);
    printf("@json {\"kind\":\"churn_writer\",\"core\":%ld,\"rounds\":%u,\"error\":%ld,"
           "\"reader_exit\":%d}\n",
           core_id(), rounds, error < 0 ? error : 0, code);
    return error >= 0 && code == 0 ? 0 : 1;
}
