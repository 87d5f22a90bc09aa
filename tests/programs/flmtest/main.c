/* flmtest: libflmalloc's calls checked from a program. `flmtest refuse`: bad
 * requests (sizes that overflow, pointers flmalloc never gave) answered with
 * NULL or left alone, never a crash. `flmtest far BLOCK_MIB COUNT`: COUNT
 * blocks of BLOCK_MIB past the local limit, so some are far files, each
 * written and read back, a far flcalloc's zeroes, a far flrealloc keeping
 * the data, all freed (test_flmalloc.py, test_flmalloc_far.py). */
#include <formica/flmalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1ul << 20)
#define BLOCKS_MAX 12
#define GOLDEN 0x9e3779b97f4a7c15ull

static int failures;

static void check(const char *what, bool ok)
{
    printf("@json {\"kind\":\"flmtest\",\"check\":\"%s\",\"ok\":%s}\n", what,
           ok ? "true" : "false");
    failures += !ok;
}

static int refusals(void)
{
    check("calloc_overflow", flcalloc((size_t)1 << 33, (size_t)1 << 33) == NULL);
    check("malloc_too_large", flmalloc((size_t)-1) == NULL);
    static uint64_t foreign[8] __attribute__((aligned(16)));
    flfree(&foreign[4]); /* refused, left alone */
    check("realloc_foreign", flrealloc(&foreign[4], 64) == NULL);
    check("free_unaligned", (flfree((char *)&foreign[4] + 3), true));
    char *block = flmalloc(64);
    flfree(block);
    flfree(block); /* a second free is refused */
    struct flmalloc_stats stats;
    flmalloc_stats_get(&stats);
    check("failures_counted", stats.failures == 6);
    check("nothing_held", stats.local_bytes == 0 && stats.far_files == 0);
    flmalloc_stats_print();
    return failures == 0 ? 0 : 1;
}

static void fill(uint64_t *words, size_t count, uint64_t seed)
{
    for (size_t i = 0; i < count; i++)
        words[i] = (i + seed) * GOLDEN;
}

static bool holds(const uint64_t *words, size_t count, uint64_t seed)
{
    for (size_t i = 0; i < count; i++)
        if (words[i] != (i + seed) * GOLDEN)
            return false;
    return true;
}

static bool all_zero(const uint64_t *words, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (words[i] != 0)
            return false;
    return true;
}

static int far_blocks(size_t block_mib, size_t count)
{
    if (count == 0 || count > BLOCKS_MAX || block_mib == 0) {
        printf("flmtest: far wants 1..%d blocks of at least 1 MiB\n", BLOCKS_MAX);
        return 2;
    }
    size_t bytes = block_mib * MIB, words = bytes / sizeof(uint64_t);
    uint64_t *blocks[BLOCKS_MAX];
    for (size_t b = 0; b < count; b++) {
        blocks[b] = flmalloc(bytes);
        if (blocks[b] == NULL) {
            check("allocated", false);
            return 1;
        }
        fill(blocks[b], words, b);
    }
    bool intact = true;
    for (size_t b = 0; b < count; b++)
        intact &= holds(blocks[b], words, b);
    check("data_intact", intact);
    struct flmalloc_stats stats;
    flmalloc_stats_get(&stats);
    check("some_far", stats.far_files >= 1 && stats.far_files < count);
    check("local_within_limit", stats.local_bytes <= stats.local_limit);
    flmalloc_stats_print();
    uint64_t *zeroes = flcalloc(words, sizeof(uint64_t));
    check("far_calloc_zeroes", zeroes != NULL && all_zero(zeroes, words));
    flfree(zeroes);
    uint64_t *grown = flrealloc(blocks[count - 1], bytes + MIB);
    check("far_realloc_keeps", grown != NULL && holds(grown, words, count - 1));
    if (grown != NULL)
        blocks[count - 1] = grown;
    for (size_t b = 0; b < count; b++)
        flfree(blocks[b]);
    flmalloc_stats_get(&stats);
    check("all_freed", stats.far_files == 0 && stats.far_bytes == 0 && stats.local_bytes == 0);
    flmalloc_stats_print();
    return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "refuse") == 0)
        return refusals();
    if (argc == 4 && strcmp(argv[1], "far") == 0)
        return far_blocks(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10));
    printf("usage: flmtest refuse | flmtest far BLOCK_MIB COUNT\n");
    return 2;
}
