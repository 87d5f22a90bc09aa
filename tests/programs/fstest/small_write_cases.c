/* small_write_cases.c: fstest's requests without a data ICA: an FS_WRITE of
 * a few bytes in the payload that overwrites one existing block (FS has BLK
 * write them in place; BLK answers), the writes that must take the ordinary
 * path (-E_NEEDS_DATA), malformed lengths, and readblocks without a data
 * ICA (lent blocks, or -E_NEEDS_DATA for a hole); a handle opened read-only
 * may not write even this way. The host test checks the file on the disk
 * image afterwards. */
#include "cases.h"
#include "report.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>
#include <string.h>

#define SW_BYTES (2u * STORAGE_BLOCK_BYTES)
#define SW_PATCH_OFFSET 100u
#define SW_PATCH_BYTES 16u
#define SW_PATCH_VALUE 0x5a

static long inline_write(struct fs_link *link, uint64_t handle, uint64_t offset, uint64_t length)
{
    struct ica_control *page = fs_prepare(link, FS_WRITE);
    *fs_write_of(page) = (struct fs_write_message){handle, offset, length};
    memset(page->payload, SW_PATCH_VALUE, length < 512 ? length : 512);
    return fs_send(link, link->fs);
}

static long readblock_without_data(struct fs_link *link, uint64_t handle, uint64_t first)
{
    struct ica_control *page = fs_prepare(link, FS_READBLOCK);
    *fs_readblock_of(page) = (struct fs_readblock_message){handle, first, 1};
    return fs_send(link, link->fs);
}

static bool patch_reads_back(struct fs_link *link, uint64_t handle)
{
    long bytes = fs_read_at(link, handle, 0, SW_BYTES);
    const uint8_t *data = fs_data(link);
    bool same = bytes == SW_BYTES && matches_pattern(data, 4, 0, SW_PATCH_OFFSET) &&
                matches_pattern(data + SW_PATCH_OFFSET + SW_PATCH_BYTES, 4,
                                SW_PATCH_OFFSET + SW_PATCH_BYTES,
                                SW_BYTES - SW_PATCH_OFFSET - SW_PATCH_BYTES);
    for (uint32_t i = 0; i < SW_PATCH_BYTES; i++)
        same &= data[SW_PATCH_OFFSET + i] == SW_PATCH_VALUE;
    return same;
}

void run_small_write_cases(struct fs_link *link)
{
    long handle = fs_open_path(link, "/fstest/sw.bin",
                               FS_OPEN_CREATE | FS_OPEN_TRUNCATE | FS_OPEN_READ | FS_OPEN_WRITE);
    fill_pattern(fs_data(link), 4, 0, SW_BYTES);
    long written = fs_write_at(link, (uint64_t)handle, 0, SW_BYTES);
    report("small_write_file", handle > 0 && written == SW_BYTES, written);
    long result = inline_write(link, (uint64_t)handle, SW_PATCH_OFFSET, SW_PATCH_BYTES);
    long sender = ica_control_of(link->control)->sender;
    bool in_place = result == SW_PATCH_BYTES && fs_link_is_blk(link, sender);
    if (result == -E_NEEDS_DATA) { /* not a 4 KiB-block file system: the ordinary write */
        memset(fs_data(link), SW_PATCH_VALUE, SW_PATCH_BYTES);
        result = fs_write_at(link, (uint64_t)handle, SW_PATCH_OFFSET, SW_PATCH_BYTES);
    }
    report("small_write", result == SW_PATCH_BYTES, result);
    printf("@json {\"kind\":\"fstest_small_write\",\"answered_by\":\"%s\"}\n",
           in_place ? "blk" : "fs");
    report("small_write_reads_back", patch_reads_back(link, (uint64_t)handle), 0);
    uint64_t size = 0;
    long stat = fs_stat_path(link, "/fstest/sw.bin", &size);
    report("small_write_size_unchanged", stat == 0 && size == SW_BYTES, (long)size);
    report("small_write_two_blocks",
           inline_write(link, (uint64_t)handle, STORAGE_BLOCK_BYTES - 8, 16) == -E_NEEDS_DATA, 0);
    report("small_write_past_end",
           inline_write(link, (uint64_t)handle, SW_BYTES - 8, 16) == -E_NEEDS_DATA, 0);
    report("small_write_too_long",
           inline_write(link, (uint64_t)handle, 0, FS_INLINE_WRITE_BYTES + 1) == -E_INVALID, 0);
    report("small_write_zero_bytes", inline_write(link, (uint64_t)handle, 0, 0) == -E_INVALID, 0);
    result = readblock_without_data(link, (uint64_t)handle, 1);
    const struct ica_control *page = ica_control_of(link->control);
    report("readblock_without_data",
           in_place ? result == STORAGE_BLOCK_BYTES && page->lent_count == 1 &&
                          matches_pattern(ica_address(page->lent[0]), 4, STORAGE_BLOCK_BYTES,
                                          STORAGE_BLOCK_BYTES)
                    : result == -E_NEEDS_DATA,
           result);
    long hole = fs_open_path(link, "/fstest/hole.bin", FS_OPEN_READ);
    report("readblock_without_data_hole",
           hole > 0 && readblock_without_data(link, (uint64_t)hole, 0) == -E_NEEDS_DATA, hole);
    fs_close_handle(link, (uint64_t)hole);
    long reader = fs_open_path(link, "/fstest/sw.bin", FS_OPEN_READ);
    result = inline_write(link, (uint64_t)reader, 0, SW_PATCH_BYTES);
    report("small_write_read_only_handle", reader > 0 && result == -E_BAD_HANDLE, result);
    report("small_write_read_only_unchanged", patch_reads_back(link, (uint64_t)handle), 0);
    fs_close_handle(link, (uint64_t)reader);
    fs_close_handle(link, (uint64_t)handle);
}
