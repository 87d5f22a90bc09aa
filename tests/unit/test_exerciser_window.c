/* test_exerciser_window.c: fileexerciser's pure parts (tests/programs/
 * fileexerciser): what a reader's window allows (a byte the file held at
 * some time of the window, inside the file; a short count only where the
 * file ended; a size it had) and refuses (a stale byte, a hole's zero while
 * the offset was never a hole, a later write's byte), the model, and the
 * generator's determinism and bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "exerciser.h"

#define MAX_FILE (256u * 1024)

static struct model model;

static int set_up(void **state)
{
    (void)state;
    return model_start(&model, MAX_FILE) ? 0 : -1;
}

static int tear_down(void **state)
{
    (void)state;
    free(model.bytes);
    return 0;
}

static struct operation write_of(uint32_t number, uint64_t offset, uint64_t length)
{
    return (struct operation){
        .number = number, .kind = OPERATION_PWRITE, .offset = offset, .length = length};
}

static struct operation truncate_to(uint32_t number, uint64_t size)
{
    return (struct operation){.number = number, .kind = OPERATION_TRUNCATE, .length = size};
}

/* A value no state of the window has at `offset` (some value not in the set). */
static uint8_t value_not_allowed(const struct window *window, uint64_t offset)
{
    for (unsigned value = 1; value < 256; value++)
        if (!window_allows_byte(window, offset, (uint8_t)value))
            return (uint8_t)value;
    fail_msg("every value allowed");
    return 0;
}

static void test_written_bytes_are_never_zero(void **state)
{
    (void)state;
    unsigned zeros = 0, same_as_next_write = 0;
    for (uint32_t number = 1; number < 200; number++)
        for (uint64_t offset = 0; offset < 500; offset++) {
            zeros += written_byte(number, offset) == 0;
            same_as_next_write += written_byte(number, offset) == written_byte(number + 1, offset);
        }
    assert_int_equal(zeros, 0);
    assert_true(same_as_next_write < 200 * 500 / 100); /* about 1 in 255 */
}

static void test_model_truncate_zeroes_and_extension_reads_zero(void **state)
{
    (void)state;
    struct operation write = write_of(1, 100, 5000);
    model_apply(&model, &write);
    assert_int_equal(model.size, 5100);
    assert_int_equal(model.bytes[100], written_byte(1, 100));
    struct operation shrink = truncate_to(2, 200), grow = truncate_to(3, 8000);
    model_apply(&model, &shrink);
    model_apply(&model, &grow);
    assert_int_equal(model.size, 8000);
    assert_int_equal(model.bytes[199], written_byte(1, 199));
    assert_int_equal(model.bytes[200], 0);
    assert_int_equal(model.bytes[5099], 0);
    assert_int_equal(model_read_count(&model, 7990, 100), 10);
    assert_int_equal(model_read_count(&model, 8000, 100), 0);
}

static void test_window_without_operations_is_exact(void **state)
{
    (void)state;
    struct operation write = write_of(1, 0, 4096);
    model_apply(&model, &write);
    struct window window = {&model, NULL, 0};
    assert_true(window_allows_byte(&window, 10, written_byte(1, 10)));
    assert_false(window_allows_byte(&window, 10, (uint8_t)(written_byte(1, 10) + 1)));
    assert_false(window_allows_byte(&window, 4096, 0)); /* past the end: no byte at all */
    assert_true(window_allows_size(&window, 4096));
    assert_false(window_allows_size(&window, 4097));
    assert_true(window_allows_count(&window, 4000, 200, 96));
    assert_false(window_allows_count(&window, 4000, 200, 95));
    assert_false(window_allows_count(&window, 4000, 200, 201));
}

static void test_a_write_in_the_window_allows_old_and_new_bytes(void **state)
{
    (void)state;
    struct operation first = write_of(1, 0, 8192);
    model_apply(&model, &first);
    struct operation during[] = {write_of(2, 4000, 200)};
    struct window window = {&model, during, 1};
    assert_true(window_allows_byte(&window, 4100, written_byte(1, 4100)));
    assert_true(window_allows_byte(&window, 4100, written_byte(2, 4100)));
    assert_false(window_allows_byte(&window, 4100, value_not_allowed(&window, 4100)));
    assert_false(window_allows_byte(&window, 4100, 0)); /* never a hole */
}

static void test_a_byte_overwritten_before_the_window_is_stale(void **state)
{
    (void)state;
    struct operation old = write_of(1, 0, 4096), newer = write_of(2, 0, 4096);
    model_apply(&model, &old);
    model_apply(&model, &newer);
    struct operation during[] = {write_of(3, 8192, 10)};
    struct window window = {&model, during, 1};
    for (uint64_t offset = 0; offset < 64; offset++)
        if (written_byte(1, offset) != written_byte(2, offset))
            assert_false(window_allows_byte(&window, offset, written_byte(1, offset)));
    /* the hole the extension left reads 0, and only 0 */
    assert_true(window_allows_byte(&window, 5000, 0));
    assert_false(window_allows_byte(&window, 5000, written_byte(1, 5000)));
}

/* A truncate and a write in the window: past the truncation the old bytes
 * (before it), or the write's; a 0 only where the file was a hole. */
static void test_a_truncate_in_the_window(void **state)
{
    (void)state;
    struct operation first = write_of(1, 0, 16384);
    model_apply(&model, &first);
    struct operation during[] = {truncate_to(2, 1000), write_of(3, 3000, 100)};
    struct window window = {&model, during, 2};
    assert_true(window_allows_byte(&window, 5000, written_byte(1, 5000)));
    assert_false(window_allows_byte(&window, 5000, 0)); /* past the end once cut */
    assert_true(window_allows_byte(&window, 2000, 0));  /* the hole before the write */
    assert_true(window_allows_byte(&window, 3050, written_byte(3, 3050)));
    assert_true(window_allows_size(&window, 16384));
    assert_true(window_allows_size(&window, 1000));
    assert_true(window_allows_size(&window, 3100));
    assert_false(window_allows_size(&window, 3000));
    /* a read of 0..16384 may stop where the file ended at one of the times */
    assert_true(window_allows_count(&window, 0, 16384, 1000));
    assert_true(window_allows_count(&window, 0, 16384, 3100));
    assert_true(window_allows_count(&window, 0, 16384, 16384));
    assert_true(window_allows_count(&window, 20000, 100, 0));
    uint8_t data[8];
    for (int i = 0; i < 8; i++)
        data[i] = written_byte(1, 4000 + (uint64_t)i);
    assert_true(window_first_wrong_byte(&window, 4000, data, 8, false) == UINT64_MAX);
    data[5] = 0;
    assert_true(window_first_wrong_byte(&window, 4000, data, 8, false) == 4005);
    /* a lent page may show the 0 a truncate wrote past the end, never another value */
    assert_true(window_first_wrong_byte(&window, 4000, data, 8, true) == UINT64_MAX);
    assert_true(window_allows_page_byte(&window, 5000, 0));
    assert_false(window_allows_page_byte(&window, 500, 0)); /* inside at every time */
    data[5] = value_not_allowed(&window, 4005);
    assert_true(window_first_wrong_byte(&window, 4000, data, 8, true) == 4005);
}

static void test_an_o_trunc_reopen_empties_the_file(void **state)
{
    (void)state;
    struct operation first = write_of(1, 0, 4096);
    model_apply(&model, &first);
    struct operation reopen = {.number = 2, .kind = OPERATION_REOPEN, .flags = REOPEN_TRUNCATE};
    struct window window = {&model, &reopen, 1};
    assert_true(window_allows_size(&window, 0));
    assert_true(window_allows_count(&window, 0, 4096, 0));
    model_apply(&model, &reopen);
    assert_int_equal(model.size, 0);
    assert_int_equal(model.bytes[0], 0);
}

static struct exerciser_options options_of(uint64_t seed)
{
    return (struct exerciser_options){.seed = seed,
                                      .operations = 5000,
                                      .max_file_bytes = MAX_FILE,
                                      .max_transfer_bytes = 80 * 1024,
                                      .epoch_operations = 4,
                                      .reader_core = -1,
                                      .writer_pid = -1};
}

/* The same seed gives the same operations (a reader regenerates its
 * writer's), another stream or seed others; every one stays in the file. */
static void test_generator_is_deterministic_and_bounded(void **state)
{
    (void)state;
    struct exerciser_options options = options_of(7);
    struct generator a, b, other;
    generator_start(&a, &options, 0);
    generator_start(&b, &options, 0);
    generator_start(&other, &options, 1);
    unsigned differ = 0, kinds[OPERATION_KINDS] = {0};
    for (uint32_t i = 1; i <= options.operations; i++) {
        struct operation x = generator_next(&a), y = generator_next(&b), z = generator_next(&other);
        assert_int_equal(x.number, i);
        assert_memory_equal(&x, &y, sizeof x);
        differ += x.kind != z.kind || x.offset != z.offset || x.length != z.length;
        kinds[x.kind]++;
        if (operation_changes_file(&x) && x.kind != OPERATION_TRUNCATE &&
            x.kind != OPERATION_REOPEN) {
            assert_true(x.length > 0);
            assert_true(x.offset + x.length <= MAX_FILE);
        }
        if (x.kind == OPERATION_TRUNCATE)
            assert_true(x.length <= MAX_FILE);
        if (x.kind == OPERATION_WRITEBLOCK || x.kind == OPERATION_READBLOCK)
            assert_true(x.offset % 4096 == 0 && x.length % 4096 == 0 && x.length > 0);
        if (x.kind != OPERATION_STAT && x.kind != OPERATION_FSYNC && x.kind != OPERATION_REOPEN &&
            x.kind != OPERATION_TRUNCATE)
            assert_true(x.length <= options.max_transfer_bytes);
        assert_true(a.size <= MAX_FILE);
    }
    assert_true(differ > options.operations / 2);
    for (unsigned kind = 0; kind < OPERATION_KINDS; kind++)
        assert_true(kinds[kind] > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_bytes_are_never_zero),
        cmocka_unit_test_setup_teardown(test_model_truncate_zeroes_and_extension_reads_zero, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_window_without_operations_is_exact, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_a_write_in_the_window_allows_old_and_new_bytes, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_byte_overwritten_before_the_window_is_stale, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_truncate_in_the_window, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_an_o_trunc_reopen_empties_the_file, set_up, tear_down),
        cmocka_unit_test(test_generator_is_deterministic_and_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
