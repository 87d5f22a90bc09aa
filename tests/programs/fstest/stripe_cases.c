/* stripe_cases.c: fstest's readblocks across BLK's stripes. A file of
 * STRIPE_FILE_BLOCKS blocks (more than a stripe, so its blocks cross at
 * least one stripe's end) is read two blocks at a time from every block:
 * raw (FS answers a pair of two shards itself, BLK a pair of one) and
 * through the file library's readblock (which asks again with a data ICA
 * when FS cannot have the pair lent). Every pair must match the pattern. */
#include "cases.h"
#include "report.h"
#include <formica/file.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>

#define STRIPE_FILE_BLOCKS (BLK_STRIPE_BLOCKS + 16u)
#define STRIPE_SEED 6u
#define WRITE_BLOCKS (FSTEST_DATA_BYTES / STORAGE_BLOCK_BYTES)

static long make_file(struct fs_link *link)
{
    long handle = fs_open_path(link, "/fstest/stripes.bin",
                               FS_OPEN_CREATE | FS_OPEN_TRUNCATE | FS_OPEN_READ | FS_OPEN_WRITE);
    long written = 0;
    for (uint32_t block = 0; block < STRIPE_FILE_BLOCKS && handle > 0; block += WRITE_BLOCKS) {
        uint64_t offset = (uint64_t)block * STORAGE_BLOCK_BYTES;
        fill_pattern(fs_data(link), STRIPE_SEED, offset, FSTEST_DATA_BYTES);
        written += fs_write_at(link, (uint64_t)handle, offset, FSTEST_DATA_BYTES);
    }
    report("stripe_file", handle > 0 && written == STRIPE_FILE_BLOCKS * STORAGE_BLOCK_BYTES,
           written);
    return handle;
}

/* Raw FS_READBLOCKs with a data ICA: each pair matches; who answered. */
static void raw_pairs(struct fs_link *link, uint64_t handle)
{
    uint32_t by_blk = 0, by_fs = 0, bad = 0;
    for (uint32_t first = 0; first + 2 <= STRIPE_FILE_BLOCKS; first++) {
        long bytes = fs_readblock(link, handle, first, 2);
        const struct ica_control *page = ica_control_of(link->control);
        bool same = bytes == 2 * STORAGE_BLOCK_BYTES;
        for (uint32_t i = 0; i < 2 && same; i++) {
            const uint8_t *block = page->lent_count == 2 ? ica_address(page->lent[i])
                                                         : fs_data(link) + i * STORAGE_BLOCK_BYTES;
            same = matches_pattern(block, STRIPE_SEED, (uint64_t)(first + i) * STORAGE_BLOCK_BYTES,
                                   STORAGE_BLOCK_BYTES);
        }
        bad += !same;
        if (fs_link_is_blk(link, page->sender))
            by_blk++;
        else if (page->sender == link->fs)
            by_fs++;
    }
    printf("@json {\"kind\":\"fstest_stripes\",\"shards\":%u,\"answered_by_blk\":%u,"
           "\"answered_by_fs\":%u}\n",
           link->blk.count, by_blk, by_fs);
    report("readblock_across_stripes", bad == 0, bad);
}

/* The same pairs through the library's readblock (lent when one shard has
 * them, else asked again with a data ICA). */
static void library_pairs(void)
{
    int fd = open("/fstest/stripes.bin", O_RDONLY);
    uint32_t bad = fd < 0;
    for (uint32_t first = 0; fd >= 0 && first + 2 <= STRIPE_FILE_BLOCKS; first++) {
        const void *data = NULL;
        long bytes = readblock(fd, 2, first, &data);
        bad += bytes != 2 * STORAGE_BLOCK_BYTES ||
               !matches_pattern(data, STRIPE_SEED, (uint64_t)first * STORAGE_BLOCK_BYTES,
                                2 * STORAGE_BLOCK_BYTES);
    }
    if (fd >= 0)
        close(fd);
    report("library_readblock_across_stripes", bad == 0, bad);
}

void run_stripe_cases(struct fs_link *link)
{
    long handle = make_file(link);
    if (handle <= 0)
        return;
    raw_pairs(link, (uint64_t)handle);
    fs_close_handle(link, (uint64_t)handle);
    library_pairs();
}
