/* stream.c: flashbench's STREAM-like workload (McCalpin's STREAM, seed 000
 * §4.2): three arrays of doubles a, b, c, each a third of the data, and
 * rounds of copy (c = a), scale (b = 3c), add (c = a + b) and triad
 * (a = b + 3c), lib/stream_kernel.c's; every element is checked against the
 * scalar recurrence. */
#include "flashbench.h"
#include <formica/stream_kernel.h>
#include <stdio.h>

#define DEFAULT_ROUNDS 4

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
    stream_fill(a, b, c, count);
    struct stream_values values = stream_values_start();
    uint64_t start = flash_now_us();
    for (uint64_t round = 0; round < rounds; round++) {
        stream_run_round(a, b, c, count);
        values = stream_values_after_round(values);
    }
    long synced = flash_memory_sync();
    result->microseconds = flash_now_us() - start;
    result->verified = synced == 0 && stream_check(a, b, c, count, values);
    flash_memory_end();
    result->rounds = rounds;
    result->work_bytes = rounds * stream_round_bytes(count); /* STREAM's count: 2+2+3+3 */
    return 0;
}
