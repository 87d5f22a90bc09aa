/* random.c: the fuzzer's random source, xorshift64* seeded through
 * splitmix64: the same seed gives the same calls (docs/fuzzing.md). */
#include "fuzz.h"

void random_seed(struct fuzz *fuzz, uint64_t seed)
{
    uint64_t mixed = seed + 0x9e3779b97f4a7c15ull;
    mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9ull;
    mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111ebull;
    mixed ^= mixed >> 31;
    fuzz->state = mixed != 0 ? mixed : 1;
}

uint64_t random_next(struct fuzz *fuzz)
{
    uint64_t x = fuzz->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    fuzz->state = x;
    return x * 0x2545f4914f6cdd1dull;
}

uint64_t random_below(struct fuzz *fuzz, uint64_t bound)
{
    return bound == 0 ? 0 : random_next(fuzz) % bound;
}

bool random_chance(struct fuzz *fuzz, unsigned percent)
{
    return random_below(fuzz, 100) < percent;
}

void random_fill(struct fuzz *fuzz, void *buffer, uint64_t bytes)
{
    uint8_t *out = buffer;
    for (uint64_t i = 0; i < bytes; i++)
        out[i] = (uint8_t)random_next(fuzz);
}
