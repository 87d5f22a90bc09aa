/* test_command_line.c: host unit tests of kernel/command_line.c, the lookup
 * of "name=value" and bare "name" words in the kernel command line and of
 * decimal option values. The test
 * provides the kernel_shared record the kernels normally set up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "shared.h"

static struct kernel_shared shared_record;
struct kernel_shared *kernel_shared = &shared_record;

static void set_command_line(const char *text)
{
    memset(shared_record.command_line, 0, sizeof(shared_record.command_line));
    strncpy(shared_record.command_line, text, sizeof(shared_record.command_line) - 1);
}

static void test_name_value(void **state)
{
    (void)state;
    char value[32];
    set_command_line("cores=4 log=debug test=ring");
    assert_true(command_line_option("cores", value, sizeof(value)));
    assert_string_equal(value, "4");
    assert_true(command_line_option("log", value, sizeof(value)));
    assert_string_equal(value, "debug");
    assert_true(command_line_option("test", value, sizeof(value)));
    assert_string_equal(value, "ring");
}

static void test_bare_name_gives_empty_value(void **state)
{
    (void)state;
    char value[32] = "unchanged";
    set_command_line("quiet cores=2 verbose");
    assert_true(command_line_option("quiet", value, sizeof(value)));
    assert_string_equal(value, "");
    strcpy(value, "unchanged");
    assert_true(command_line_option("verbose", value, sizeof(value)));
    assert_string_equal(value, "");
}

static void test_absent_and_prefixes(void **state)
{
    (void)state;
    char value[32] = "unchanged";
    set_command_line("coresx=9 xcores=8 core=1");
    assert_false(command_line_option("cores", value, sizeof(value)));
    assert_string_equal(value, "unchanged");
    assert_true(command_line_option("core", value, sizeof(value)));
    assert_string_equal(value, "1");
    /* A value containing the name is not a word. */
    set_command_line("a=cores=5");
    assert_false(command_line_option("cores", value, sizeof(value)));
    set_command_line("");
    assert_false(command_line_option("cores", value, sizeof(value)));
    set_command_line("   ");
    assert_false(command_line_option("cores", value, sizeof(value)));
}

static void test_spaces_and_first_match(void **state)
{
    (void)state;
    char value[32];
    set_command_line("   mode=fast    mode=slow   ");
    assert_true(command_line_option("mode", value, sizeof(value)));
    assert_string_equal(value, "fast");
    set_command_line("empty= next=1");
    assert_true(command_line_option("empty", value, sizeof(value)));
    assert_string_equal(value, "");
}

static void test_value_truncated_to_buffer(void **state)
{
    (void)state;
    char value[8];
    memset(value, 'X', sizeof(value));
    set_command_line("path=/a/very/long/value tail=1");
    assert_true(command_line_option("path", value, 5));
    assert_string_equal(value, "/a/v");
    assert_int_equal(value[5], 'X');
    assert_true(command_line_option("path", value, 1));
    assert_string_equal(value, "");
    /* A zero-sized buffer is left alone. */
    memset(value, 'X', sizeof(value));
    assert_true(command_line_option("path", value, 0));
    assert_int_equal(value[0], 'X');
}

static void test_numbers(void **state)
{
    (void)state;
    set_command_line(
        "ap_timeout_ms=250 fault_core=3x ica_wait_delay=abc bare huge=18446744073709551615");
    assert_int_equal(command_line_number("ap_timeout_ms", 7), 250);
    assert_int_equal(command_line_number("fault_core", 7), 3); /* digits up to the first other */
    assert_int_equal(command_line_number("ica_wait_delay", 7), 7); /* not a number */
    assert_int_equal(command_line_number("bare", 7), 7);           /* no value */
    assert_int_equal(command_line_number("absent", 7), 7);
    assert_true(command_line_number("huge", 0) == UINT64_MAX);
    assert_int_equal(command_line_parse_number("intercore:12" + 10, 0), 12);
    assert_int_equal(command_line_parse_number("", 5), 5);
}

static void test_full_length_command_line(void **state)
{
    (void)state;
    char value[16];
    memset(shared_record.command_line, 'a', COMMAND_LINE_BYTES - 1);
    shared_record.command_line[COMMAND_LINE_BYTES - 1] = '\0';
    memcpy(shared_record.command_line + COMMAND_LINE_BYTES - 5, " z=1", 4);
    assert_true(command_line_option("z", value, sizeof(value)));
    assert_string_equal(value, "1");
    assert_false(command_line_option("y", value, sizeof(value)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_value),
        cmocka_unit_test(test_bare_name_gives_empty_value),
        cmocka_unit_test(test_absent_and_prefixes),
        cmocka_unit_test(test_spaces_and_first_match),
        cmocka_unit_test(test_value_truncated_to_buffer),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_full_length_command_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
