/* handle_cases.c: fstest's cases of FS's own checks on handles, offsets and
 * sizes, in one process: forged and closed handles, access modes, ranges
 * that overflow or pass the largest file, readblock at block 2^52, reading
 * a directory, a directory removed while open, and the per-process share
 * of the open-file table. */
#include "cases.h"
#include "report.h"
#include <formica/errors.h>
#include <formica/storage.h>
#include <stdint.h>

#define SHARE_LIMIT 128 /* FS's OPEN_FILES_PER_PROCESS (servers/fs/open_files.h) */

static void expect(const char *name, long result, long wanted)
{
    report(name, result == wanted, result);
}

static long truncate_handle(struct fs_link *link, uint64_t handle, uint64_t size)
{
    *fs_truncate_of(fs_prepare(link, FS_TRUNCATE)) = (struct fs_truncate_message){handle, size};
    return fs_send(link, link->fs);
}

static void forged_and_closed(struct fs_link *link)
{
    expect("handle_forged", fs_read_at(link, (0x1234ull << 16) | 5, 0, 16), -E_BAD_HANDLE);
    expect("handle_slot_out_of_range", fs_read_at(link, (1ull << 16) | 0xffff, 0, 16),
           -E_BAD_HANDLE);
    long handle = fs_open_path(link, "/hello.txt", FS_OPEN_READ);
    expect("handle_close", fs_close_handle(link, (uint64_t)handle), 0);
    expect("handle_closed_read", fs_read_at(link, (uint64_t)handle, 0, 16), -E_BAD_HANDLE);
    expect("handle_closed_twice", fs_close_handle(link, (uint64_t)handle), -E_BAD_HANDLE);
    uint32_t links = 0;
    expect("handle_closed_stat", fs_stat_handle(link, (uint64_t)handle, &links), -E_BAD_HANDLE);
}

static void access_modes(struct fs_link *link)
{
    long handle = fs_open_path(link, "/hello.txt", FS_OPEN_READ);
    expect("handle_read_only_write", fs_write_at(link, (uint64_t)handle, 0, 4), -E_BAD_HANDLE);
    expect("handle_read_only_truncate", truncate_handle(link, (uint64_t)handle, 0), -E_BAD_HANDLE);
    fs_close_handle(link, (uint64_t)handle);
    expect("open_unknown_flags", fs_open_path(link, "/hello.txt", 1u << 20), -E_INVALID);
    expect("open_truncate_without_write", fs_open_path(link, "/hello.txt", FS_OPEN_TRUNCATE),
           -E_INVALID);
    expect("open_directory_for_writing", fs_open_path(link, "/", FS_OPEN_READ | FS_OPEN_WRITE),
           -E_IS_DIRECTORY);
}

static void ranges(struct fs_link *link)
{
    long handle = fs_open_path(link, "/fstest/rb.bin", FS_OPEN_READ | FS_OPEN_WRITE);
    report("ranges_open", handle > 0, handle);
    expect("read_offset_overflow", fs_read_at(link, (uint64_t)handle, UINT64_MAX - 8, 16),
           -E_INVALID);
    expect("write_offset_overflow", fs_write_at(link, (uint64_t)handle, UINT64_MAX - 8, 16),
           -E_INVALID);
    expect("write_past_largest_file", fs_write_at(link, (uint64_t)handle, 1ull << 50, 16),
           -E_TOO_BIG);
    expect("truncate_past_largest_file", truncate_handle(link, (uint64_t)handle, 1ull << 60),
           -E_TOO_BIG);
    expect("readblock_2_52", fs_readblock(link, (uint64_t)handle, 1ull << 52, 1), -E_INVALID);
    expect("readblock_past_largest_file", fs_readblock(link, (uint64_t)handle, 1ull << 40, 1),
           -E_TOO_BIG);
    long bytes = fs_readblock(link, (uint64_t)handle, 0, 1);
    report("readblock_after_refusals", bytes == STORAGE_BLOCK_BYTES, bytes);
    fs_close_handle(link, (uint64_t)handle);
}

static void directories(struct fs_link *link)
{
    long directory = fs_open_path(link, "/", FS_OPEN_DIRECTORY);
    expect("read_directory", fs_read_at(link, (uint64_t)directory, 0, 64), -E_IS_DIRECTORY);
    expect("readblock_directory", fs_readblock(link, (uint64_t)directory, 0, 1), -E_IS_DIRECTORY);
    fs_close_handle(link, (uint64_t)directory);
    long file = fs_open_path(link, "/hello.txt", 0);
    struct fs_readdir_message *message = fs_readdir_of(fs_prepare(link, FS_READDIR));
    *message = (struct fs_readdir_message){.handle = (uint64_t)file};
    expect("readdir_of_file", fs_send(link, link->fs), -E_NOT_DIRECTORY);
    fs_close_handle(link, (uint64_t)file);
}

/* A directory removed while open reads as empty; its handle still closes. */
static void removed_directory(struct fs_link *link)
{
    fs_path_call(link, FS_MKDIR, "/fstest/doomed");
    long directory = fs_open_path(link, "/fstest/doomed", FS_OPEN_DIRECTORY);
    long removed = fs_path_call(link, FS_RMDIR, "/fstest/doomed");
    report("rmdir_while_open", directory > 0 && removed == 0, removed);
    struct fs_readdir_message *message = fs_readdir_of(fs_prepare(link, FS_READDIR));
    *message = (struct fs_readdir_message){.handle = (uint64_t)directory};
    expect("readdir_removed_directory", fs_send(link, link->fs), 0);
    uint32_t links;
    expect("stat_removed_directory", fs_stat_handle(link, (uint64_t)directory, &links),
           -E_NOT_FOUND);
    expect("close_removed_directory", fs_close_handle(link, (uint64_t)directory), 0);
}

/* One process may hold SHARE_LIMIT handles; one more is refused, and all close. */
static void share_limit(struct fs_link *link)
{
    static uint64_t handles[SHARE_LIMIT];
    long opened = 0, result = 0;
    while (opened < SHARE_LIMIT && (result = fs_open_path(link, "/hello.txt", 0)) > 0)
        handles[opened++] = (uint64_t)result;
    long extra = fs_open_path(link, "/hello.txt", 0);
    long closed = 0;
    for (long i = 0; i < opened; i++)
        closed += fs_close_handle(link, handles[i]) == 0;
    report("open_share_limit", opened == SHARE_LIMIT && extra == -E_BUSY, extra);
    report("open_share_closed", closed == opened, closed);
}

void run_handle_cases(struct fs_link *link)
{
    forged_and_closed(link);
    access_modes(link);
    ranges(link);
    directories(link);
    removed_directory(link);
    share_limit(link);
}
