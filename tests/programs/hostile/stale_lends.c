/* stale_lends.c: lent cache pages kept past the end of their blocks.
 * `hostile keeplends blk|fs` (an ordinary user) reads its own file with
 * lend-only readblocks and keeps every answer's control ICA (so each lend
 * lasts): four blocks a request (BLK lends them) or one (FS lends on the
 * block it borrows). It then truncates and unlinks the file, syncs (the
 * blocks are free on the disk), and waits while another user writes a
 * private file and a directory (`hostile secret blk|fs`) that may take
 * those blocks; every page it still sees must hold its own old bytes, none
 * of the other user's (docs/storage.md, "Freed blocks and lent pages").
 * `hostile raceread MODE` and `hostile racefree MODE` free the blocks
 * while an FS replica's read of them is in flight (fs_replica_delay), or
 * (`shorten`) cut the file inside its last block, which the owner zeroes
 * in place. */
#include "hostile.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define KEPT_BYTE 'k'
#define SECRET_WORD "SeCrEt!!" /* 8 bytes, written over the victim's file */
#define SECRET_BLOCKS 512u     /* 2 MiB: more than the attacker freed, so its blocks are taken */
#define RACE_SECRET_BLOCKS 64u /* written while a replica's read pauses: quick */
#define MARK_WAIT_MS 120000u
#define MARK_POLL_MS 20u
#define SERVER_WAIT_MS 30000u
#define MAX_KEPT 64u /* pages kept; the control ICAs holding them stay within ICA_PER_PROCESS */
#define RACE_BLOCKS 8u
#define RACE_DIRECT_BLOCKS                                                                         \
    12u /* an ext2 inode's direct blocks: the rest go through an indirect one */
#define RACE_INDIRECT_BLOCKS 20u /* `indirect`: 8 blocks past the direct ones */
#define RACE_DIRECTORIES 32u     /* `indirect`'s other user: directories that take freed blocks */
#define RACE_FREE_AFTER_MS 1000u /* the reader's request has reached the replica by then */
#define RACE_SHORTEN_BYTES 2048u /* `shorten`: cut from the last block, which stays the file's */

struct keep_mode {
    const char *name;
    uint32_t blocks;      /* the attacker's file */
    uint32_t per_request; /* blocks a readblock asks for */
};

static const struct keep_mode modes[] = {
    {"blk", 60, ICA_MAX_ATTACHED}, /* 15 requests of 4 blocks: BLK's own lends */
    {"fs", 32, 1},                 /* 32 one-block requests: FS's slots lend them on */
};

static const struct keep_mode *mode_named(const char *name)
{
    for (uint32_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, name) == 0)
            return &modes[i];
    return NULL;
}

/* The attacker's file and the marks of a round named `name`. */
static void round_path(char *buffer, const char *what, const char *name)
{
    snprintf(buffer, 64, "/keep.%s.%s", name, what);
}

static bool exists(const char *path)
{
    struct file_status status;
    return stat(path, &status) == 0;
}

static bool wait_for(const char *path)
{
    for (uint32_t waited = 0; !exists(path); waited += MARK_POLL_MS) {
        if (waited >= MARK_WAIT_MS)
            return false;
        sleep_ms(MARK_POLL_MS);
    }
    return true;
}

static long make_mark(const char *path)
{
    int fd = open(path, O_CREAT | O_WRONLY);
    return fd < 0 ? fd : close(fd);
}

/* The file of `blocks` blocks of `byte`; 0 or an error. */
static long write_filled(const char *path, uint32_t blocks, char byte)
{
    static char block[STORAGE_BLOCK_BYTES];
    memset(block, byte, sizeof block);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY);
    if (fd < 0)
        return fd;
    long written = 0;
    for (uint32_t i = 0; i < blocks && written >= 0; i++)
        written = pwrite(fd, block, sizeof block, (uint64_t)i * sizeof block);
    long synced = written >= 0 ? fsync(fd) : written;
    close(fd);
    return synced < 0 ? synced : 0;
}

/* A raw request on a control ICA of its own: FS_OPEN (read only) or FS_CLOSE. */
static long raw_call(long fs, uint32_t operation, const char *path, uint64_t handle)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0)
        return control;
    struct ica_control *page = ica_control_of((uint64_t)control);
    request_prepare((uint64_t)control, operation);
    if (operation == FS_OPEN) {
        *fs_open_of(page) = (struct fs_open_message){.flags = FS_OPEN_READ};
        memcpy(page->payload, path, strlen(path) + 1);
    } else {
        *fs_close_of(page) = (struct fs_close_message){.handle = handle};
    }
    long result = request_call(fs, (uint64_t)control);
    ica_free((uint64_t)control);
    return result;
}

/* What the attacker holds: each lent page, and how many FS itself lent on. */
struct kept_pages {
    const uint8_t *pages[MAX_KEPT];
    uint32_t count, by_fs, requests, not_lent;
};

/* One lend-only readblock whose control ICA is kept: the lends last. */
static void keep_readblock(long fs, uint64_t handle, uint64_t first, uint32_t blocks,
                           struct kept_pages *kept)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0)
        return;
    struct ica_control *page = ica_control_of((uint64_t)control);
    request_prepare((uint64_t)control, FS_READBLOCK);
    *fs_readblock_of(page) =
        (struct fs_readblock_message){.handle = handle, .first_block = first, .blocks = blocks};
    long result = request_call(fs, (uint64_t)control);
    kept->requests++;
    if (result != (long)blocks * STORAGE_BLOCK_BYTES || page->lent_count != blocks) {
        kept->not_lent++;
        ica_free((uint64_t)control);
        return;
    }
    kept->by_fs += page->sender == (uint32_t)fs ? blocks : 0;
    for (uint32_t i = 0; i < blocks && kept->count < MAX_KEPT; i++)
        kept->pages[kept->count++] = ica_address(page->lent[i]);
}

static bool holds_secret(const uint8_t *page)
{
    for (uint32_t at = 0; at + sizeof SECRET_WORD - 1 <= STORAGE_BLOCK_BYTES; at++)
        if (page[at] == SECRET_WORD[0] && memcmp(page + at, SECRET_WORD, 6) == 0)
            return true;
    return false;
}

static bool only_kept_bytes(const uint8_t *page)
{
    for (uint32_t at = 0; at < STORAGE_BLOCK_BYTES; at++)
        if (page[at] != KEPT_BYTE)
            return false;
    return true;
}

int keep_lends_past_truncate(const char *name)
{
    const struct keep_mode *mode = mode_named(name);
    if (mode == NULL)
        return 2;
    char path[64], truncated[64], written[64];
    round_path(path, "file", mode->name);
    round_path(truncated, "truncated", mode->name);
    round_path(written, "secret", mode->name);
    long fs = server_wait_for(SERVER_NAME_FS, SERVER_WAIT_MS);
    long error = fs < 0 ? fs : write_filled(path, mode->blocks, KEPT_BYTE);
    long handle = error < 0 ? error : raw_call(fs, FS_OPEN, path, 0);
    if (handle < 0) {
        printf("hostile: keeplends: %s: %s\n", path, error_text(handle));
        return 1;
    }
    struct kept_pages kept = {0};
    for (uint32_t block = 0; block < mode->blocks; block += mode->per_request)
        keep_readblock(fs, (uint64_t)handle, block, mode->per_request, &kept);
    /* The blocks freed: the handle closed, the file emptied and removed, the disk synced. */
    raw_call(fs, FS_CLOSE, NULL, (uint64_t)handle);
    int fd = open(path, O_WRONLY);
    long truncated_to = fd < 0 ? fd : ftruncate(fd, 0);
    if (fd >= 0)
        close(fd);
    long removed = unlink(path), synced = sync();
    make_mark(truncated);
    bool secret_written = wait_for(written);
    uint32_t secret = 0, changed = 0;
    for (uint32_t i = 0; i < kept.count; i++) {
        secret += holds_secret(kept.pages[i]);
        changed += !only_kept_bytes(kept.pages[i]);
    }
    printf("@json {\"kind\":\"stale_lends\",\"mode\":\"%s\",\"core\":%ld,\"requests\":%u,"
           "\"lent\":%u,\"by_fs\":%u,\"not_lent\":%u,\"freed\":%s,\"secret_written\":%s,"
           "\"secret_pages\":%u,\"changed_pages\":%u}\n",
           mode->name, core_id(), kept.requests, kept.count, kept.by_fs, kept.not_lent,
           truncated_to == 0 && removed == 0 && synced == 0 ? "true" : "false",
           secret_written ? "true" : "false", secret, changed);
    return 0;
}

/* The other user's private directory: made 0700, a file in it named with
 * the secret, and (`indirect`) subdirectories, each taking a block as
 * metadata. 0 or an error. */
static long write_secret_directory(const char *name, const char *directory)
{
    char inner[112];
    long error = mkdir(directory);
    if (error >= 0)
        error = chmod(directory, 0700);
    snprintf(inner, sizeof inner, "%s/" SECRET_WORD "name", directory);
    if (error >= 0)
        error = make_mark(inner);
    for (uint32_t i = 0; strcmp(name, "indirect") == 0 && i < RACE_DIRECTORIES && error >= 0; i++) {
        snprintf(inner, sizeof inner, "%s/" SECRET_WORD "%u", directory, i);
        error = mkdir(inner);
    }
    return error < 0 ? error : 0;
}

/* The other user's private file of `blocks` blocks of the secret: created
 * empty, made 0600, then written. 0 or an error. */
static long write_secret_file(const char *path, uint32_t blocks)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY);
    long error = fd < 0 ? fd : close(fd);
    if (error == 0)
        error = chmod(path, 0600);
    static char block[STORAGE_BLOCK_BYTES];
    for (uint32_t at = 0; at < sizeof block; at += sizeof SECRET_WORD - 1)
        memcpy(block + at, SECRET_WORD, sizeof SECRET_WORD - 1);
    fd = error < 0 ? (int)error : open(path, O_WRONLY);
    for (uint32_t i = 0; fd >= 0 && i < blocks && error >= 0; i++)
        error = pwrite(fd, block, sizeof block, (uint64_t)i * sizeof block);
    if (fd >= 0)
        close(fd);
    return error < 0 ? error : 0;
}

int write_secret_after_truncate(const char *name)
{
    char truncated[64], written[64], path[64], directory[64];
    round_path(truncated, "truncated", name);
    round_path(written, "secret", name);
    snprintf(path, sizeof path, "/secret.%s.%u", name, (unsigned)process_id());
    snprintf(directory, sizeof directory, "/secretdir.%s.%u", name, (unsigned)process_id());
    if (!wait_for(truncated))
        return 1;
    bool race = strcmp(name, "blk") != 0 && strcmp(name, "fs") != 0;
    /* the directory first: its blocks (metadata) take the lowest free ones */
    long error = write_secret_directory(name, directory);
    if (error == 0)
        error = write_secret_file(path, race ? RACE_SECRET_BLOCKS : SECRET_BLOCKS);
    if (error == 0)
        error = sync();
    printf("@json {\"kind\":\"stale_lends_secret\",\"round\":\"%s\",\"error\":%ld,"
           "\"written_us\":%lu}\n",
           name, error, (unsigned long)clock_microseconds());
    make_mark(written);
    return error < 0 ? 1 : 0;
}

/* `hostile racefree NAME` (started by raceread on another core): a moment
 * after the reader's request left, the file's blocks are freed (`shorten`:
 * the file is cut inside its last block, whose tail the owner zeroes). */
int free_during_read(const char *name)
{
    char path[64], truncated[64];
    round_path(path, "file", name);
    round_path(truncated, "truncated", name);
    uint64_t size =
        strcmp(name, "shorten") == 0 ? RACE_BLOCKS * STORAGE_BLOCK_BYTES - RACE_SHORTEN_BYTES : 0;
    sleep_ms(RACE_FREE_AFTER_MS);
    uint64_t started = clock_microseconds();
    int fd = open(path, O_WRONLY);
    long error = fd < 0 ? fd : ftruncate(fd, size);
    if (fd >= 0)
        close(fd);
    if (error == 0)
        error = sync();
    printf("@json {\"kind\":\"race_free\",\"round\":\"%s\",\"error\":%ld,"
           "\"truncate_us\":%lu}\n",
           name, error, (unsigned long)started);
    make_mark(truncated);
    return error == 0 ? 0 : 1;
}

/* Counts the bytes of `count` at `data` that are neither the attacker's
 * own nor zero (a hole, or past the end), and the zeros (its file has
 * none), and whether any is the secret. */
static void count_foreign(const uint8_t *data, long count, uint32_t *foreign, uint32_t *zeros,
                          bool *secret)
{
    for (long at = 0; at < count; at++) {
        *foreign += data[at] != KEPT_BYTE && data[at] != 0;
        *zeros += data[at] == 0;
        *secret |=
            data[at] == SECRET_WORD[0] && at + 6 <= count && memcmp(data + at, SECRET_WORD, 6) == 0;
    }
}

/* One raw lend-only readblock of one block on a control ICA of its own
 * (kept: its lend lasts while the library's channel makes other requests):
 * the result, and the lent block in *data. */
static long raw_readblock(long fs, uint64_t handle, const void **data)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0)
        return control;
    struct ica_control *page = ica_control_of((uint64_t)control);
    request_prepare((uint64_t)control, FS_READBLOCK);
    *fs_readblock_of(page) =
        (struct fs_readblock_message){.handle = handle, .first_block = 0, .blocks = 1};
    long result = request_call(fs, (uint64_t)control);
    *data = result > 0 && page->lent_count == 1 ? ica_address(page->lent[0]) : NULL;
    return *data != NULL ? result : (result > 0 ? -E_NEEDS_DATA : result);
}

/* `hostile raceread forward|pin|read|indirect|shorten` (on an FS replica's core, with
 * fs_replica_delay set): reads its file once so the replica remembers
 * where the blocks lie, starts `hostile racefree` on core 0, and reads
 * again at once: the replica pauses as of the view it took while the file
 * is truncated and another user's private file takes the blocks; the read
 * must still bring only its own bytes or none (docs/storage.md, "FS
 * replicas"). forward: four blocks lent through the library, which the
 * replica forwards to BLK; pin: one block the replica lends on from what it
 * borrowed, looked at once the other user's file is written (a raw request:
 * its lend outlives the library's stat of the mark); read: pread, which the
 * replica copies from BLK; indirect: pread past the direct blocks, which
 * the replica maps through the file's indirect block as of its view while
 * the other user's directories may take that block; shorten: pread, while
 * the file is cut inside its last block (none freed): the read must bring
 * the whole file as of its view or the shorter one, never the old count
 * with the zeroed tail. */
int read_during_free(const char *name)
{
    char path[64], written[64], arguments[48];
    round_path(path, "file", name);
    round_path(written, "secret", name);
    bool forward = strcmp(name, "forward") == 0, pin = strcmp(name, "pin") == 0;
    bool indirect = strcmp(name, "indirect") == 0;
    long error = write_filled(path, indirect ? RACE_INDIRECT_BLOCKS : RACE_BLOCKS, KEPT_BYTE);
    int fd = error < 0 ? (int)error : open(path, O_RDONLY);
    long fs = server_wait_for(SERVER_NAME_FS, SERVER_WAIT_MS);
    long handle = pin && fd >= 0 ? raw_call(fs, FS_OPEN, path, 0) : 0;
    if (fd < 0 || handle < 0)
        return 1;
    static uint8_t copy[RACE_BLOCKS * STORAGE_BLOCK_BYTES];
    const void *data = copy;
    long warmed = forward ? readblock(fd, ICA_MAX_ATTACHED, 0, &data)
                  : pin   ? raw_readblock(fs, (uint64_t)handle, &data)
                          : 0;
    snprintf(arguments, sizeof arguments, "racefree %s", name);
    long freer = spawn("hostile", arguments, 0, PRIORITY_APPLICATION);
    uint64_t at = indirect ? RACE_DIRECT_BLOCKS * STORAGE_BLOCK_BYTES : 0;
    long result = forward ? readblock(fd, ICA_MAX_ATTACHED, 0, &data)
                  : pin   ? raw_readblock(fs, (uint64_t)handle, &data)
                          : pread(fd, copy, sizeof copy, at);
    uint64_t answered = clock_microseconds();
    uint32_t foreign = 0, zeros = 0;
    bool secret = false;
    if (result > 0 && !pin)
        count_foreign(data, result, &foreign, &zeros, &secret);
    if (pin)
        wait_for(written); /* the block lent on, looked at once the other file is written */
    if (result > 0 && pin)
        count_foreign(data, result, &foreign, &zeros, &secret);
    int code = -1;
    if (freer > 0)
        wait_process(freer, &code);
    close(fd);
    printf("@json {\"kind\":\"race_read\",\"round\":\"%s\",\"core\":%ld,\"warmed\":%ld,"
           "\"result\":%ld,\"foreign_bytes\":%u,\"zero_bytes\":%u,\"secret\":%s,"
           "\"freer_exit\":%d,\"answered_us\":%lu,\"checked_us\":%lu}\n",
           name, core_id(), warmed, result, foreign, zeros, secret ? "true" : "false", code,
           (unsigned long)answered, (unsigned long)clock_microseconds());
    return 0;
}
