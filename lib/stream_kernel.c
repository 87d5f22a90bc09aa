/* stream_kernel.c: the STREAM kernels (stream_kernel.h): copy, scale, add
 * and triad over three arrays of doubles, their byte counts and the scalar
 * recurrence every element follows, against which a run is checked. */
#include <formica/stream_kernel.h>

static const char *const step_names[STREAM_STEPS] = {"copy", "scale", "add", "triad"};
static const uint8_t step_arrays[STREAM_STEPS] = {2, 2, 3, 3};

void stream_run_step(enum stream_step step, double *a, double *b, double *c, uint64_t count)
{
    switch (step) {
    case STREAM_COPY:
        for (uint64_t i = 0; i < count; i++)
            c[i] = a[i];
        break;
    case STREAM_SCALE:
        for (uint64_t i = 0; i < count; i++)
            b[i] = STREAM_SCALAR * c[i];
        break;
    case STREAM_ADD:
        for (uint64_t i = 0; i < count; i++)
            c[i] = a[i] + b[i];
        break;
    case STREAM_TRIAD:
        for (uint64_t i = 0; i < count; i++)
            a[i] = b[i] + STREAM_SCALAR * c[i];
        break;
    case STREAM_STEPS:
        break;
    }
}

void stream_run_round(double *a, double *b, double *c, uint64_t count)
{
    for (int step = 0; step < STREAM_STEPS; step++)
        stream_run_step((enum stream_step)step, a, b, c, count);
}

uint64_t stream_step_bytes(enum stream_step step, uint64_t count)
{
    return step < STREAM_STEPS ? step_arrays[step] * count * sizeof(double) : 0;
}

uint64_t stream_round_bytes(uint64_t count)
{
    uint64_t bytes = 0;
    for (int step = 0; step < STREAM_STEPS; step++)
        bytes += stream_step_bytes((enum stream_step)step, count);
    return bytes;
}

const char *stream_step_name(enum stream_step step)
{
    return step < STREAM_STEPS ? step_names[step] : "unknown";
}

void stream_fill(double *a, double *b, double *c, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
}

struct stream_values stream_values_start(void)
{
    return (struct stream_values){.a = 1.0, .b = 2.0, .c = 0.0};
}

struct stream_values stream_values_after_step(struct stream_values values, enum stream_step step)
{
    switch (step) {
    case STREAM_COPY:
        values.c = values.a;
        break;
    case STREAM_SCALE:
        values.b = STREAM_SCALAR * values.c;
        break;
    case STREAM_ADD:
        values.c = values.a + values.b;
        break;
    case STREAM_TRIAD:
        values.a = values.b + STREAM_SCALAR * values.c;
        break;
    case STREAM_STEPS:
        break;
    }
    return values;
}

struct stream_values stream_values_after_round(struct stream_values values)
{
    for (int step = 0; step < STREAM_STEPS; step++)
        values = stream_values_after_step(values, (enum stream_step)step);
    return values;
}

static bool all_equal(const double *array, uint64_t count, double value)
{
    for (uint64_t i = 0; i < count; i++)
        if (array[i] != value)
            return false;
    return true;
}

bool stream_check(const double *a, const double *b, const double *c, uint64_t count,
                  struct stream_values values)
{
    return all_equal(a, count, values.a) && all_equal(b, count, values.b) &&
           all_equal(c, count, values.c);
}

uint64_t stream_bytes_per_cycle_micro(uint64_t bytes, uint64_t cycles)
{
    return cycles == 0 ? 0 : (uint64_t)((unsigned __int128)bytes * 1000000u / cycles);
}

uint64_t stream_mb_per_s_milli(uint64_t bytes, uint64_t cycles, uint64_t tsc_hz)
{
    /* bytes / (cycles / tsc_hz) / 10^6, times 1000 */
    return cycles == 0 ? 0 : (uint64_t)((unsigned __int128)bytes * tsc_hz / cycles / 1000u);
}
