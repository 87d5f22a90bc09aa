/* readblock_cases.c: fstest's readblock cases: FS maps, BLK answers the
 * application directly (the result's sender is BLK); holes and the file's
 * end are answered by FS; and the cycles of a cached one-block readblock. */
#include "cases.h"
#include "report.h"
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define RB_BLOCKS 16u
#define TIMED_CALLS 200u

static long last_sender(const struct fs_link *link)
{
    return ica_control_of(link->control)->sender;
}

static long make_file(struct fs_link *link)
{
    long handle = fs_open_path(link, "/fstest/rb.bin",
                               FS_OPEN_CREATE | FS_OPEN_TRUNCATE | FS_OPEN_READ | FS_OPEN_WRITE);
    fill_pattern(fs_data(link), 2, 0, RB_BLOCKS * STORAGE_BLOCK_BYTES);
    long written = fs_write_at(link, (uint64_t)handle, 0, RB_BLOCKS * STORAGE_BLOCK_BYTES);
    report("readblock_file", handle > 0 && written == RB_BLOCKS * STORAGE_BLOCK_BYTES, written);
    return handle;
}

/* Checks `blocks` blocks from `first` against the pattern: in the blocks BLK
 * lent (zero copy) when it lent them, else in the data ICA. */
static bool blocks_match(struct fs_link *link, uint32_t first, uint32_t blocks)
{
    const struct ica_control *page = ica_control_of(link->control);
    bool same = true;
    for (uint32_t i = 0; i < blocks; i++) {
        const uint8_t *block = page->lent_count == blocks
                                   ? (const uint8_t *)ica_address(page->lent[i])
                                   : fs_data(link) + (uint64_t)i * STORAGE_BLOCK_BYTES;
        same &= matches_pattern(block, 2, (uint64_t)(first + i) * STORAGE_BLOCK_BYTES,
                                STORAGE_BLOCK_BYTES);
    }
    return same;
}

static void direct_return(struct fs_link *link, uint64_t handle)
{
    memset(fs_data(link), 0, 3 * STORAGE_BLOCK_BYTES);
    long bytes = fs_readblock(link, handle, 5, 3);
    bool same = blocks_match(link, 5, 3);
    /* BLK lends what it answers (zero copy); FS answers 1 KiB-block file systems by copying. */
    uint32_t lent = ica_control_of(link->control)->lent_count;
    report("readblock_zero_copy_lend",
           fs_link_is_blk(link, last_sender(link)) ? lent == 3 : lent == 0, lent);
    /* BLK answers directly on 4 KiB-block file systems; FS itself on others. */
    long sender = last_sender(link);
    printf("@json {\"kind\":\"fstest_readblock\",\"answered_by\":\"%s\"}\n",
           fs_link_is_blk(link, sender) ? "blk"
           : sender == link->fs         ? "fs"
                                        : "other");
    report("readblock_direct_return", bytes == 3 * STORAGE_BLOCK_BYTES && same, bytes);
    bytes = fs_readblock(link, handle, RB_BLOCKS - 1, 4);
    report("readblock_at_end", bytes == STORAGE_BLOCK_BYTES, bytes);
    bytes = fs_readblock(link, handle, RB_BLOCKS + 3, 1);
    report("readblock_past_end", bytes == 0, bytes);
}

static void hole(struct fs_link *link)
{
    long handle = fs_open_path(link, "/fstest/hole.bin",
                               FS_OPEN_CREATE | FS_OPEN_TRUNCATE | FS_OPEN_READ | FS_OPEN_WRITE);
    fill_pattern(fs_data(link), 3, 2 * STORAGE_BLOCK_BYTES, STORAGE_BLOCK_BYTES);
    fs_write_at(link, (uint64_t)handle, 2 * STORAGE_BLOCK_BYTES, STORAGE_BLOCK_BYTES);
    memset(fs_data(link), 0xff, 3 * STORAGE_BLOCK_BYTES);
    long bytes = fs_readblock(link, (uint64_t)handle, 0, 3);
    uint8_t *data = fs_data(link);
    bool zeros = true;
    for (uint32_t i = 0; i < 2 * STORAGE_BLOCK_BYTES; i++)
        zeros &= data[i] == 0;
    bool tail = matches_pattern(data + 2 * STORAGE_BLOCK_BYTES, 3, 2 * STORAGE_BLOCK_BYTES,
                                STORAGE_BLOCK_BYTES);
    report("readblock_hole",
           bytes == 3 * STORAGE_BLOCK_BYTES && zeros && tail && last_sender(link) == link->fs,
           bytes);
    fs_close_handle(link, (uint64_t)handle);
}

static void timing(struct fs_link *link, uint64_t handle)
{
    fs_readblock(link, handle, 0, 1);
    uint64_t start = read_timestamp_counter();
    long bad = 0;
    for (uint32_t i = 0; i < TIMED_CALLS; i++)
        bad += fs_readblock(link, handle, i % RB_BLOCKS, 1) != STORAGE_BLOCK_BYTES;
    uint64_t cycles = (read_timestamp_counter() - start) / TIMED_CALLS;
    printf("@json {\"kind\":\"fstest_timing\",\"operation\":\"readblock\",\"blocks\":1,"
           "\"calls\":%u,\"cycles_per_call\":%lu,\"core\":%ld}\n",
           TIMED_CALLS, cycles, core_id());
    report("readblock_timed", bad == 0, bad);
}

void run_readblock_cases(struct fs_link *link)
{
    long handle = make_file(link);
    direct_return(link, (uint64_t)handle);
    hole(link);
    timing(link, (uint64_t)handle);
    fs_close_handle(link, (uint64_t)handle);
}
