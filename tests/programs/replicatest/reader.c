/* reader.c: replicatest's reader: right after each of the writer's steps
 * (replicatest.h), through this process's FS instance, the change must be
 * there: stat, read, readblock and readdir see it, a file unlinked while
 * open is still read whole through its open descriptor. */
#include "replicatest.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

static uint8_t bytes[ROUND_FILE_BYTES];
static int kept_fd = -1; /* opened before the unlink, read after it */

/* The caller's uid: a file the writer created (through any instance) is its. */
static uint32_t my_uid(void)
{
    static struct process_info processes[64];
    long count = process_list(processes, 64);
    for (long i = 0; i < count; i++)
        if (processes[i].pid == (uint32_t)process_id())
            return processes[i].uid;
    return UINT32_MAX;
}

static bool contents_match(uint32_t round, const uint8_t *data, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        if (data[i] != patched_byte(round, i))
            return false;
    return true;
}

/* Whether directory /replicatest lists `name`. */
static bool listed(const char *name)
{
    int fd = opendir("/replicatest");
    if (fd < 0)
        return false;
    struct directory_entry entry;
    bool found = false;
    while (readdir(fd, &entry) == 1)
        found |= strcmp(entry.name, name) == 0;
    closedir(fd);
    return found;
}

static long size_of(const char *path)
{
    struct file_status status;
    long result = stat(path, &status);
    return result < 0 ? result : (long)status.size;
}

/* The whole file through a new descriptor and its first block by readblock. */
static bool read_whole(uint32_t round, const char *path, uint64_t size, bool patched)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return report("reader", "open", round, false, fd);
    long got = read(fd, bytes, ROUND_FILE_BYTES);
    bool ok = got == (long)size;
    for (uint64_t i = 0; ok && i < size; i++)
        ok = bytes[i] == (patched ? patched_byte(round, i) : round_byte(round, i));
    report("reader", patched ? "read_patched" : "read_created", round, ok, got);
    const void *block = NULL;
    long blocked = readblock(fd, 1, 0, &block);
    bool block_ok = blocked == (long)(size < 4096 ? size : 4096) && block != NULL &&
                    memcmp(block, bytes, (size_t)blocked) == 0;
    report("reader", patched ? "readblock_patched" : "readblock_created", round, block_ok, blocked);
    close(fd);
    return ok && block_ok;
}

static bool check_created(uint32_t round, const char *text, const char *name)
{
    struct file_status status;
    long result = stat(text, &status);
    bool ok =
        report("reader", "stat_created", round, result == 0 && status.size == ROUND_FILE_BYTES,
               result < 0 ? result : (long)status.size);
    ok &= report("reader", "owner_is_the_writer", round, result == 0 && status.uid == my_uid(),
                 result < 0 ? result : (long)status.uid);
    ok &= report("reader", "listed_created", round, listed(name), 0);
    return read_whole(round, text, ROUND_FILE_BYTES, false) && ok;
}

static bool check_renamed(uint32_t round, const char *text, const char *moved)
{
    long old_size = size_of(text), new_size = size_of(moved);
    bool ok = report("reader", "old_name_gone", round, old_size == -E_NOT_FOUND, old_size);
    ok &= report("reader", "new_name_there", round, new_size == ROUND_FILE_BYTES, new_size);
    char name[32];
    snprintf(name, sizeof name, "%u.moved", round);
    return report("reader", "listed_renamed", round, listed(name), 0) && ok;
}

static bool check_truncated(uint32_t round, const char *moved)
{
    long size = size_of(moved);
    bool ok = report("reader", "size_truncated", round, size == ROUND_TRUNCATED_BYTES, size);
    kept_fd = open(moved, O_RDONLY);
    return read_whole(round, moved, ROUND_TRUNCATED_BYTES, true) && ok && kept_fd >= 0;
}

static bool check_unlinked(uint32_t round, const char *moved)
{
    long size = size_of(moved);
    bool ok = report("reader", "unlinked_name_gone", round, size == -E_NOT_FOUND, size);
    long got = pread(kept_fd, bytes, ROUND_FILE_BYTES, 0);
    bool whole = got == ROUND_TRUNCATED_BYTES && contents_match(round, bytes, (uint64_t)got);
    ok &= report("reader", "unlinked_still_read", round, whole, got);
    struct file_status status;
    long result = fstat(kept_fd, &status);
    ok &= report("reader", "unlinked_links_0", round, result == 0 && status.links == 0,
                 result < 0 ? result : (long)status.links);
    close(kept_fd);
    kept_fd = -1;
    return ok;
}

bool reader_check(uint32_t round, enum round_step step)
{
    char text[64], moved[64], name[32];
    round_path(text, round, "txt");
    round_path(moved, round, "moved");
    snprintf(name, sizeof name, "%u.txt", round);
    switch (step) {
    case STEP_CREATED:
        return check_created(round, text, name);
    case STEP_PATCHED:
        return read_whole(round, text, ROUND_FILE_BYTES, true);
    case STEP_RENAMED:
        return check_renamed(round, text, moved);
    case STEP_TRUNCATED:
        return check_truncated(round, moved);
    case STEP_UNLINKED:
        return check_unlinked(round, moved);
    case STEPS:
        break;
    }
    return false;
}
