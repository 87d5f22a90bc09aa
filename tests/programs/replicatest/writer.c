/* writer.c: replicatest's writer: one round's changes, one step at a time
 * (replicatest.h), each through this process's FS instance. */
#include "replicatest.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <stdio.h>

static uint8_t contents[ROUND_FILE_BYTES];

static long create_file(uint32_t round, const char *path)
{
    for (uint32_t i = 0; i < ROUND_FILE_BYTES; i++)
        contents[i] = round_byte(round, i);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR);
    if (fd < 0)
        return fd;
    long written = write(fd, contents, ROUND_FILE_BYTES);
    close(fd);
    return written;
}

/* PATCH_BYTES in place: a write small enough to go without a data ICA. */
static long patch_file(uint32_t round, const char *path)
{
    uint8_t patch[PATCH_BYTES];
    for (uint32_t i = 0; i < PATCH_BYTES; i++)
        patch[i] = patched_byte(round, PATCH_OFFSET + i);
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return fd;
    long written = pwrite(fd, patch, PATCH_BYTES, PATCH_OFFSET);
    close(fd);
    return written;
}

static long truncate_file(const char *path)
{
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return fd;
    long result = ftruncate(fd, ROUND_TRUNCATED_BYTES);
    close(fd);
    return result;
}

bool writer_step(uint32_t round, enum round_step step)
{
    char text[64], moved[64];
    round_path(text, round, "txt");
    round_path(moved, round, "moved");
    switch (step) {
    case STEP_CREATED: {
        long result = create_file(round, text);
        return report("writer", "create", round, result == ROUND_FILE_BYTES, result);
    }
    case STEP_PATCHED: {
        long result = patch_file(round, text);
        return report("writer", "patch", round, result == PATCH_BYTES, result);
    }
    case STEP_RENAMED: {
        long result = rename(text, moved);
        return report("writer", "rename", round, result == 0, result);
    }
    case STEP_TRUNCATED: {
        long result = truncate_file(moved);
        return report("writer", "truncate", round, result == 0, result);
    }
    case STEP_UNLINKED: {
        long result = unlink(moved);
        return report("writer", "unlink", round, result == 0, result);
    }
    case STEPS:
        break;
    }
    return false;
}
