/* test_stream_kernel.c: lib/stream_kernel.c on the host: each STREAM step
 * against its definition, the recurrence a run is checked with (and a
 * changed element caught), the bytes STREAM counts and the fixed-point rates. */
#include <formica/stream_kernel.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define COUNT 33

static void test_steps_and_recurrence(void **state)
{
    (void)state;
    double a[COUNT], b[COUNT], c[COUNT];
    stream_fill(a, b, c, COUNT);
    struct stream_values values = stream_values_start();
    assert_true(stream_check(a, b, c, COUNT, values));
    stream_run_step(STREAM_COPY, a, b, c, COUNT);
    assert_true(c[7] == 1.0);
    stream_run_step(STREAM_SCALE, a, b, c, COUNT);
    assert_true(b[7] == 3.0);
    stream_run_step(STREAM_ADD, a, b, c, COUNT);
    assert_true(c[7] == 4.0);
    stream_run_step(STREAM_TRIAD, a, b, c, COUNT);
    assert_true(a[7] == 15.0);
    values = stream_values_after_round(values);
    assert_true(values.a == 15.0 && values.b == 3.0 && values.c == 4.0);
    assert_true(stream_check(a, b, c, COUNT, values));
    for (int round = 0; round < 5; round++) {
        stream_run_round(a, b, c, COUNT);
        values = stream_values_after_round(values);
    }
    assert_true(stream_check(a, b, c, COUNT, values));
    stream_run_step(STREAM_COPY, a, b, c, COUNT); /* a step at a time follows too */
    values = stream_values_after_step(values, STREAM_COPY);
    assert_true(stream_check(a, b, c, COUNT, values));
    b[COUNT - 1] += 1.0;
    assert_false(stream_check(a, b, c, COUNT, values));
}

static void test_bytes_and_names(void **state)
{
    (void)state;
    assert_true(stream_step_bytes(STREAM_COPY, 10) == 160);
    assert_true(stream_step_bytes(STREAM_SCALE, 10) == 160);
    assert_true(stream_step_bytes(STREAM_ADD, 10) == 240);
    assert_true(stream_step_bytes(STREAM_TRIAD, 10) == 240);
    assert_true(stream_round_bytes(10) == 800); /* 10 arrays' worth: 2 + 2 + 3 + 3 */
    assert_string_equal(stream_step_name(STREAM_TRIAD), "triad");
    assert_string_equal(stream_step_name(STREAM_STEPS), "unknown");
}

static void test_rates(void **state)
{
    (void)state;
    assert_true(stream_bytes_per_cycle_micro(3, 2) == 1500000); /* 1.5 bytes a cycle */
    assert_true(stream_bytes_per_cycle_micro(1, 3) == 333333);  /* 0.333333 */
    assert_true(stream_bytes_per_cycle_micro(5, 0) == 0);
    /* 2.6 GHz: 2.6e9 cycles are a second; 3.6e9 bytes in it are 3600 MB/s */
    assert_true(stream_mb_per_s_milli(3600000000u, 2600000000u, 2600000000u) == 3600000);
    assert_true(stream_mb_per_s_milli(1500, 1000, 1000000000) == 1500000); /* 1500 MB/s */
    /* no overflow at large counts: 10^12 bytes over 10^12 cycles at 4 GHz */
    assert_true(stream_mb_per_s_milli(1000000000000ull, 1000000000000ull, 4000000000ull) ==
                4000000);
    assert_true(stream_mb_per_s_milli(5, 0, 1000) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_and_recurrence),
        cmocka_unit_test(test_bytes_and_names),
        cmocka_unit_test(test_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
