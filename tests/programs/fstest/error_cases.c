/* error_cases.c: fstest's malformed and failing requests: each must give a
 * negative result (and a log line from the server), and the servers must go
 * on answering; also an FS image that could not be mounted. */
#include "cases.h"
#include "report.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <string.h>

static void expect(const char *name, long result, long wanted)
{
    report(name, result == wanted, result);
}

static void unterminated_path(struct fs_link *link)
{
    struct ica_control *page = fs_prepare(link, FS_OPEN);
    memset(page->payload, 'a', ICA_PAYLOAD_BYTES);
    expect("path_not_terminated", fs_send(link, link->fs), -E_INVALID);
}

static void data_problems(struct fs_link *link, uint64_t handle)
{
    struct ica_control *page = fs_prepare(link, FS_READ);
    *fs_read_of(page) = (struct fs_read_message){.handle = handle, .length = 16};
    expect("read_without_data_ica", fs_send(link, link->fs), -E_INVALID);
    expect("read_longer_than_data_ica", fs_read_at(link, handle, 0, FSTEST_DATA_BYTES + 4096),
           -E_INVALID);
    expect("readblock_too_many", fs_readblock(link, handle, 0, STORAGE_MAX_BLOCKS + 1), -E_INVALID);
}

static void blk_problems(struct fs_link *link)
{
    struct ica_control *page = fs_prepare_with_data(link, BLK_READ);
    *blk_read_of(page) = (struct blk_read_message){.first_block = 1ull << 40, .blocks = 1};
    long blk = link->blk.count > 0 ? link->blk.pids[0] : -E_NOT_FOUND;
    expect("blk_read_refused_without_right", fs_send(link, blk), -E_PERMISSION);
    fs_prepare(link, 4242);
    expect("blk_unknown_operation", fs_send(link, blk), -E_INVALID);
}

void run_error_cases(struct fs_link *link)
{
    fs_prepare(link, 999);
    expect("unknown_operation", fs_send(link, link->fs), -E_INVALID);
    expect("bad_handle_zero", fs_read_at(link, 0, 0, 16), -E_BAD_HANDLE);
    expect("bad_handle_huge", fs_read_at(link, 0x7fffffff, 0, 16), -E_BAD_HANDLE);
    expect("missing_file", fs_open_path(link, "/no/such/file", 0), -E_NOT_FOUND);
    unterminated_path(link);
    long handle = fs_open_path(link, "/hello.txt", 0);
    data_problems(link, (uint64_t)handle);
    blk_problems(link);
    long bytes = fs_read_at(link, (uint64_t)handle, 0, 5);
    report("still_serving", bytes == 5, bytes);
    fs_close_handle(link, (uint64_t)handle);
}

void run_unmounted_cases(struct fs_link *link)
{
    long result = fs_open_path(link, "/hello.txt", 0);
    report("unmounted_open", result == -E_CORRUPT || result == -E_IO, result);
    uint64_t size;
    result = fs_stat_path(link, "/", &size);
    report("unmounted_stat", result == -E_CORRUPT || result == -E_IO, result);
    fs_prepare(link, FS_SYNC);
    result = fs_send(link, link->fs);
    report("unmounted_sync", result == -E_CORRUPT || result == -E_IO, result);
}
