/* flmwrap: an ordinary program of malloc, calloc, realloc and free, built
 * twice: flmwrap with FLMALLOC's --wrap (build/user.mk) and flmplain
 * without. Each checks its data and prints flmalloc's statistics, which
 * show the wrapped one's allocations and none of the plain one's
 * (test_flmalloc.py). `flmwrap BIG_MIB` also takes one block of BIG_MIB. */
#include <formica/flmalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1ul << 20)

static bool filled_with(const unsigned char *bytes, size_t length, unsigned char value)
{
    for (size_t i = 0; i < length; i++)
        if (bytes[i] != value)
            return false;
    return true;
}

/* Small blocks: malloc, calloc's zeroes, realloc keeping the data, free. */
static bool small_blocks(void)
{
    unsigned char *first = malloc(1000);
    unsigned char *zeroes = calloc(100, 16);
    if (first == NULL || zeroes == NULL)
        return false;
    memset(first, 0xa5, 1000);
    bool ok = filled_with(zeroes, 1600, 0);
    unsigned char *grown = realloc(first, 5000);
    ok = ok && grown != NULL && filled_with(grown, 1000, 0xa5);
    free(grown != NULL ? grown : first);
    free(zeroes);
    return ok;
}

/* One large block, written and read back word by word. */
static bool big_block(size_t bytes)
{
    uint64_t *words = malloc(bytes);
    if (words == NULL)
        return false;
    size_t count = bytes / sizeof *words;
    for (size_t i = 0; i < count; i++)
        words[i] = i * 0x9e3779b97f4a7c15ull;
    bool ok = true;
    for (size_t i = 0; i < count && ok; i++)
        ok = words[i] == i * 0x9e3779b97f4a7c15ull;
    free(words);
    return ok;
}

int main(int argc, char **argv)
{
    size_t big = argc > 1 ? strtoul(argv[1], NULL, 10) * MIB : 0;
    bool ok = small_blocks() && (big == 0 || big_block(big));
    printf("@json {\"kind\":\"flmwrap\",\"ok\":%s,\"big_bytes\":%lu}\n", ok ? "true" : "false",
           (unsigned long)big);
    flmalloc_stats_print();
    return ok ? 0 : 1;
}
