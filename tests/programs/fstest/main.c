/* tests/programs/fstest: exercises FS (and BLK) with raw requests, and the file
 * library's readbyte buffer, and prints one @json fstest line per case.
 * `fstest` runs every case; `fstest unmounted` expects FS to refuse
 * everything (a corrupt disk); `fstest child ...` is a second process of
 * the sharing cases. Exit 0 if all passed. */
#include "cases.h"
#include "report.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>
#include <string.h>

/* BLK's counters, summed over its shards. */
static void print_cache_stats(struct fs_link *link)
{
    if (link->blk.count == 0)
        return;
    struct blk_stats_message stats;
    long result = blk_shards_stats(&link->blk, link->control, &stats);
    printf("@json {\"kind\":\"blkstats\",\"result\":%ld,\"shards\":%u,\"hits\":%lu,"
           "\"misses\":%lu,\"dirty\":%lu,\"cached\":%lu,\"capacity\":%lu,\"read_ahead\":%lu,"
           "\"written_back\":%lu,\"evictions\":%lu}\n",
           result, link->blk.count, stats.hits, stats.misses, stats.dirty, stats.cached,
           stats.capacity, stats.read_ahead, stats.written_back, stats.evictions);
}

int main(int argc, char **argv)
{
    struct fs_link link;
    long error = fs_link_open(&link);
    if (error != 0) {
        printf("fstest: no file server: %s\n", error_text(error));
        return 1;
    }
    if (argc >= 2 && strcmp(argv[1], "child") == 0)
        return run_child_case(&link, argc, argv);
    if (argc >= 2 && strcmp(argv[1], "unmounted") == 0) {
        run_unmounted_cases(&link);
    } else {
        run_file_cases(&link);
        run_readblock_cases(&link);
        run_stripe_cases(&link);
        run_small_write_cases(&link);
        run_readbyte_cases();
        run_error_cases(&link);
        run_handle_cases(&link);
        run_sharing_cases(&link);
        print_cache_stats(&link);
    }
    printf("fstest: %d failed\n", failures());
    return failures() == 0 ? 0 : 1;
}
