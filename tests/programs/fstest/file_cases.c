/* file_cases.c: fstest's cases of files and directories: create, write, read
 * back, stat, readdir, mkdir, rename, unlink, rmdir, truncate, sync. They
 * leave /fstest/b.txt (5000 bytes, seed 1) for the host to compare. */
#include "cases.h"
#include "report.h"
#include <formica/errors.h>
#include <formica/storage.h>
#include <string.h>

#define BIG_BYTES 20000u
#define SHORT_BYTES 5000u

static void read_existing(struct fs_link *link)
{
    long handle = fs_open_path(link, "/hello.txt", FS_OPEN_READ);
    report("open_existing", handle > 0, handle);
    long bytes = fs_read_at(link, (uint64_t)handle, 0, 64);
    bool same = bytes == 27 && memcmp(fs_data(link), "Hello from Formica's disk.\n", 27) == 0;
    report("read_existing", same, bytes);
    report("close", fs_close_handle(link, (uint64_t)handle) == 0, handle);
}

static long write_big_file(struct fs_link *link)
{
    long handle = fs_open_path(link, "/fstest/a.txt",
                               FS_OPEN_CREATE | FS_OPEN_TRUNCATE | FS_OPEN_READ | FS_OPEN_WRITE);
    report("create", handle > 0, handle);
    fill_pattern(fs_data(link), 1, 0, BIG_BYTES);
    long written = fs_write_at(link, (uint64_t)handle, 0, BIG_BYTES);
    report("write", written == BIG_BYTES, written);
    memset(fs_data(link), 0, BIG_BYTES);
    long bytes = fs_read_at(link, (uint64_t)handle, 0, BIG_BYTES);
    report("read_back", bytes == BIG_BYTES && matches_pattern(fs_data(link), 1, 0, BIG_BYTES),
           bytes);
    uint64_t size = 0;
    long result = fs_stat_path(link, "/fstest/a.txt", &size);
    report("stat", result == 0 && size == BIG_BYTES, (long)size);
    return handle;
}

static void find_in_directory(struct fs_link *link, const char *directory, const char *name)
{
    long handle = fs_open_path(link, directory, FS_OPEN_DIRECTORY);
    bool found = false;
    long result = 0;
    for (uint64_t cursor = 0, entries = 0; entries < 64; entries++) {
        struct ica_control *page = fs_prepare(link, FS_READDIR);
        struct fs_readdir_message *message = fs_readdir_of(page);
        *message = (struct fs_readdir_message){.handle = (uint64_t)handle, .cursor = cursor};
        result = fs_send(link, link->fs);
        if (result != 1)
            break;
        const struct fs_dirent *entry = (const struct fs_dirent *)page->payload;
        found |= strcmp(entry->name, name) == 0 && entry->type == 1;
        cursor = message->cursor;
    }
    report("readdir", found && result == 0, result);
    fs_close_handle(link, (uint64_t)handle);
}

/* The handle of a.txt stays valid across the rename. */
static void rename_and_truncate(struct fs_link *link, long handle)
{
    struct ica_control *page = fs_prepare(link, FS_RENAME);
    memcpy(page->payload, "/fstest/a.txt\0/fstest/b.txt", 28);
    long result = fs_send(link, link->fs);
    uint64_t size;
    long old = fs_stat_path(link, "/fstest/a.txt", &size);
    report("rename", result == 0 && old == -E_NOT_FOUND, result);
    page = fs_prepare(link, FS_TRUNCATE);
    *fs_truncate_of(page) = (struct fs_truncate_message){(uint64_t)handle, SHORT_BYTES};
    result = fs_send(link, link->fs);
    long stat = fs_stat_path(link, "/fstest/b.txt", &size);
    report("truncate", result == 0 && stat == 0 && size == SHORT_BYTES, (long)size);
    long bytes = fs_read_at(link, (uint64_t)handle, 4000, 4096);
    report("read_short_at_end", bytes == 1000 && matches_pattern(fs_data(link), 1, 4000, 1000),
           bytes);
    bytes = fs_read_at(link, (uint64_t)handle, 9000, 100);
    report("read_past_end", bytes == 0, bytes);
    fs_close_handle(link, (uint64_t)handle);
}

static void remove_names(struct fs_link *link)
{
    long handle = fs_open_path(link, "/fstest/gone.txt", FS_OPEN_CREATE);
    fs_close_handle(link, (uint64_t)handle);
    long result = fs_path_call(link, FS_UNLINK, "/fstest/gone.txt");
    uint64_t size;
    report("unlink",
           handle > 0 && result == 0 &&
               fs_stat_path(link, "/fstest/gone.txt", &size) == -E_NOT_FOUND,
           result);
    long made = fs_path_call(link, FS_MKDIR, "/fstest/sub");
    result = fs_path_call(link, FS_RMDIR, "/fstest/sub");
    report("rmdir", made > 0 && result == 0, result);
}

void run_file_cases(struct fs_link *link)
{
    read_existing(link);
    long directory = fs_path_call(link, FS_MKDIR, "/fstest");
    report("mkdir", directory > 0, directory);
    long handle = write_big_file(link);
    find_in_directory(link, "/fstest", "a.txt");
    rename_and_truncate(link, handle);
    remove_names(link);
    fs_prepare(link, FS_SYNC);
    long synced = fs_send(link, link->fs);
    report("sync", synced == 0, synced);
}
