/* stream.c: flashbench's STREAM-like workload (McCalpin's STREAM, seed 000
 * §4.2): three arrays of doubles a, b, c, each a third of the data, and
 * rounds of copy (c = a), scale (b = 3c), add (c = a + b) and triad
 * (a = b + 3c); every element is checked against the scalar recurrence. */
#include "flashbench.h"
#include <stdio.h>

#define DEFAULT_ROUNDS 4
#define SCALAR 3.0

static bool all_equal(const double *array, uint64_t count, double value)
{
    for (uint64_t i = 0; i < count; i++)
        if (array[i] != value)
            return false;
    return true;
}

static void one_round(double *a, double *b, double *c, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        c[i] = a[i];
    for (uint64_t i = 0; i < count; i++)
        b[i] = SCALAR * c[i];
    for (uint64_t i = 0; i < count; i++)
        c[i] = a[i] + b[i];
    for (uint64_t i = 0; i < count; i++)
        a[i] = b[i] + SCALAR * c[i];
}

long flash_stream(const struct flash_options *options, struct flash_result *result)
{
    uint64_t count = options->bytes / 3 / sizeof(double);
    uint64_t rounds = options->rounds != 0 ? options->rounds : DEFAULT_ROUNDS;
    if (count == 0 || flash_memory_start(options, 3) != 0)
        return -1;
    double *a = flash_memory_take(count * sizeof(double));
    double *b = a != NULL ? flash_memory_take(count * sizeof(double)) : NULL;
    double *c = b != NULL ? flash_memory_take(count * sizeof(double)) : NULL;
    if (c == NULL)
        return -1;
    for (uint64_t i = 0; i < count; i++)
        a[i] = 1.0, b[i] = 2.0;
    double aj = 1.0, bj = 2.0, cj = 0.0;
    uint64_t start = flash_now_us();
    for (uint64_t round = 0; round < rounds; round++) {
        one_round(a, b, c, count);
        cj = aj, bj = SCALAR * cj, cj = aj + bj, aj = bj + SCALAR * cj;
    }
    long synced = flash_memory_sync();
    result->microseconds = flash_now_us() - start;
    result->verified = synced == 0 && all_equal(a, count, aj) && all_equal(b, count, bj) &&
                       all_equal(c, count, cj);
    flash_memory_end();
    result->rounds = rounds;
    result->work_bytes = rounds * 10 * count * sizeof(double); /* STREAM's count: 2+2+3+3 */
    return 0;
}
