/* test_size_parse.c: host unit tests of lib/size_parse.c, the one parser of sizes
 * on command lines (bonnie -s, sort -n, memseq -s, teramem options): suffixes,
 * bases, and every malformed form, which must leave the value untouched. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <formica/size.h> /* lib/include/formica/size.h, through -idirafter */

static uint64_t parsed(const char *text)
{
    uint64_t value = 0;
    assert_true(size_parse(text, &value));
    return value;
}

static void refused(const char *text)
{
    uint64_t value = 12345;
    assert_false(size_parse(text, &value));
    assert_int_equal(value, 12345);
}

static void test_plain_numbers(void **state)
{
    (void)state;
    assert_int_equal(parsed("0"), 0);
    assert_int_equal(parsed("4096"), 4096);
    assert_int_equal(parsed("0x1000"), 4096);
    assert_int_equal(parsed("18446744073709551615"), UINT64_MAX);
}

static void test_suffixes_are_powers_of_1024(void **state)
{
    (void)state;
    assert_int_equal(parsed("64K"), 64 * 1024);
    assert_int_equal(parsed("64k"), 64 * 1024);
    assert_int_equal(parsed("3M"), 3 * 1024 * 1024);
    assert_int_equal(parsed("2g"), 2ULL << 30);
    assert_int_equal(parsed("0x10K"), 16 * 1024);
    assert_int_equal(parsed("17179869183G"), (17179869183ULL << 30));
}

static void test_malformed_sizes_are_refused(void **state)
{
    (void)state;
    refused("");
    refused("K");
    refused("abc");
    refused("12KB");
    refused("12T");
    refused("1 M");
    refused("12x");
    refused("-1");
    refused(" 1");
    refused("+1");
    refused("17179869184G"); /* 2^34 GiB does not fit in 64 bits */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_numbers),
        cmocka_unit_test(test_suffixes_are_powers_of_1024),
        cmocka_unit_test(test_malformed_sizes_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
