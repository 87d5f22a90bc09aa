/* files.c: file calls through the library (lib/file.c) on files under
 * FUZZ_DIRECTORY with offsets and sizes from the pools: opens, reads,
 * writes, readblock (BLK's lent blocks), truncates, renames, removes. */
#include "fuzz.h"
#include <formica/file.h>
#include <formica/storage.h>
#include <stdio.h>
#include <string.h>

static void path_of(struct fuzz *fuzz, char *path, unsigned size)
{
    snprintf(path, size, "%s/%c%u", FUZZ_DIRECTORY, random_chance(fuzz, 80) ? 'f' : 'd',
             (unsigned)random_below(fuzz, 6));
}

static int pick_fd(struct fuzz *fuzz)
{
    if (fuzz->file_count > 0 && random_chance(fuzz, 85))
        return fuzz->files[random_below(fuzz, fuzz->file_count)];
    return (int)random_below(fuzz, 40) - 2;
}

static void open_call(struct fuzz *fuzz)
{
    char path[64];
    path_of(fuzz, path, sizeof path);
    int flags = (int)(random_next(fuzz) & 0x3ff);
    if (random_chance(fuzz, 70))
        flags = O_CREAT | O_RDWR;
    long fd = fuzz_result(fuzz, "open", open(path, flags), (uint64_t)flags, 0, 0);
    if (fd < 0)
        return;
    if (fuzz->file_count == FUZZ_FILES) {
        fuzz_result(fuzz, "close", close(fuzz->files[0]), (uint64_t)fuzz->files[0], 0, 0);
        fuzz->files[0] = fuzz->files[--fuzz->file_count];
    }
    fuzz->files[fuzz->file_count++] = (int)fd;
}

static void close_call(struct fuzz *fuzz)
{
    int fd = pick_fd(fuzz);
    long result = fuzz_result(fuzz, "close", close(fd), (uint64_t)fd, 0, 0);
    for (uint32_t i = 0; result == 0 && i < fuzz->file_count; i++)
        if (fuzz->files[i] == fd) {
            fuzz->files[i] = fuzz->files[--fuzz->file_count];
            break;
        }
}

static uint64_t pick_offset(struct fuzz *fuzz)
{
    return random_chance(fuzz, 80) ? random_below(fuzz, 1u << 18) : pick_size(fuzz);
}

static uint64_t pick_length(struct fuzz *fuzz)
{
    return random_chance(fuzz, 80) ? random_below(fuzz, 3 * 4096) : pick_size(fuzz);
}

/* The library copies between the caller's buffer and a data ICA itself:
 * the buffer is always the caller's writable scratch, large enough. */
static void transfer_call(struct fuzz *fuzz)
{
    int fd = pick_fd(fuzz);
    uint64_t offset = pick_offset(fuzz), length = pick_length(fuzz);
    if (length > FUZZ_SCRATCH_BYTES)
        length = FUZZ_SCRATCH_BYTES;
    void *buffer = (void *)pick_pointer(fuzz, POINTER_WRITABLE, length);
    if (random_chance(fuzz, 50))
        fuzz_result(fuzz, "pread", pread(fd, buffer, length, offset), (uint64_t)fd, offset, length);
    else
        fuzz_result(fuzz, "pwrite", pwrite(fd, buffer, length, offset), (uint64_t)fd, offset,
                    length);
}

static void block_call(struct fuzz *fuzz)
{
    int fd = pick_fd(fuzz);
    uint32_t size = random_chance(fuzz, 80) ? 1 + (uint32_t)random_below(fuzz, 4)
                                            : (uint32_t)random_next(fuzz); /* in blocks */
    uint64_t block = random_chance(fuzz, 80) ? random_below(fuzz, 64) : pick_size(fuzz);
    const void *data = NULL;
    if (random_chance(fuzz, 70)) {
        fuzz_result(fuzz, "readblock", readblock(fd, size, block, &data), (uint64_t)fd, size,
                    block);
        return;
    }
    if (size > FUZZ_SCRATCH_BYTES / 4096)
        size = FUZZ_SCRATCH_BYTES / 4096; /* the library reads size blocks from the buffer */
    memset(scratch(), (int)random_below(fuzz, 256), (uint64_t)size * 4096);
    fuzz_result(fuzz, "writeblock", writeblock(fd, size, block, scratch()), (uint64_t)fd, size,
                block);
}

static void name_call(struct fuzz *fuzz)
{
    char path[64], other[64];
    path_of(fuzz, path, sizeof path);
    path_of(fuzz, other, sizeof other);
    switch (random_below(fuzz, 6)) {
    case 0:
        fuzz_result(fuzz, "unlink", unlink(path), 0, 0, 0);
        return;
    case 1:
        fuzz_result(fuzz, "mkdir", mkdir(path), 0, 0, 0);
        return;
    case 2:
        fuzz_result(fuzz, "rmdir", rmdir(path), 0, 0, 0);
        return;
    case 3:
        fuzz_result(fuzz, "rename", rename(path, other), 0, 0, 0);
        return;
    case 4: {
        struct file_status status;
        fuzz_result(fuzz, "stat", stat(path, &status), 0, 0, 0);
        return;
    }
    default: {
        uint64_t size = pick_offset(fuzz);
        fuzz_result(fuzz, "ftruncate", ftruncate(pick_fd(fuzz), size), size, 0, 0);
        return;
    }
    }
}

void fuzz_file(struct fuzz *fuzz)
{
    switch (random_below(fuzz, 8)) {
    case 0:
    case 1:
        open_call(fuzz);
        return;
    case 2:
        close_call(fuzz);
        return;
    case 3:
    case 4:
        transfer_call(fuzz);
        return;
    case 5:
        block_call(fuzz);
        return;
    case 6:
        name_call(fuzz);
        return;
    default:
        if (random_chance(fuzz, 5)) {
            int fd = pick_fd(fuzz);
            fuzz_result(fuzz, "fsync", fsync(fd), (uint64_t)fd, 0, 0);
        }
        return;
    }
}

void files_close_all(struct fuzz *fuzz)
{
    while (fuzz->file_count > 0)
        close(fuzz->files[--fuzz->file_count]);
}

#define CLEAN_NAMES 64

/* Removes what `path` holds (files, then directories one level down), then
 * `path` itself. Names are read first: removing shifts a directory's entries.
 * The fuzzer may have made a directory with any mode: its owner (we) first
 * makes it readable, writable and searchable again. */
static long clean_directory(const char *path, int depth)
{
    static char names[3][CLEAN_NAMES][FILE_NAME_MAX + 1];
    chmod(path, 0700);
    int fd = opendir(path);
    if (fd < 0)
        return fd == -E_NOT_FOUND ? 0 : fd;
    struct directory_entry entry;
    int count = 0;
    while (count < CLEAN_NAMES && readdir(fd, &entry) > 0)
        if (strcmp(entry.name, ".") != 0 && strcmp(entry.name, "..") != 0)
            strncpy(names[depth][count++], entry.name, FILE_NAME_MAX + 1);
    closedir(fd);
    long first_error = 0;
    for (int i = 0; i < count; i++) {
        char child[300];
        snprintf(child, sizeof child, "%s/%s", path, names[depth][i]);
        long error = unlink(child);
        if (error == -E_IS_DIRECTORY && depth < 2)
            error = clean_directory(child, depth + 1);
        if (error != 0 && first_error == 0)
            first_error = error;
    }
    long error = rmdir(path);
    return first_error != 0 ? first_error : error;
}

/* Removes FUZZ_DIRECTORY and everything in it. */
long files_clean(void)
{
    return clean_directory(FUZZ_DIRECTORY, 0);
}
