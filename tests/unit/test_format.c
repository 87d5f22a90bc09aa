/* test_format.c: host unit tests of lib/format.c, Formica's printf engine:
 * each conversion, flag, width, precision and length modifier (checked
 * against the host's snprintf where they agree), truncation and sinks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <cmocka.h>
#include <format.h> /* lib/include/format.h, through -idirafter */

/* Formats with Formica and with the host libc and requires the same text
 * and the same return value. */
#define SAME(...)                                                                                  \
    do {                                                                                           \
        char ours[256], theirs[256];                                                               \
        int our_length = format_string(ours, sizeof(ours), __VA_ARGS__);                           \
        int their_length = snprintf(theirs, sizeof(theirs), __VA_ARGS__);                          \
        assert_string_equal(ours, theirs);                                                         \
        assert_int_equal(our_length, their_length);                                                \
    } while (0)

/* Formats with Formica and requires `expected`, and its length returned. */
#define GIVES(expected, ...)                                                                       \
    do {                                                                                           \
        char ours[256];                                                                            \
        int our_length = format_string(ours, sizeof(ours), __VA_ARGS__);                           \
        assert_string_equal(ours, expected);                                                       \
        assert_int_equal(our_length, (int)strlen(expected));                                       \
    } while (0)

/* Without the printf format attribute: for format strings gcc would reject. */
static int format_unchecked(char *buffer, size_t size, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    int length = format_string_va(buffer, size, format, arguments);
    va_end(arguments);
    return length;
}

static void test_plain_text_and_percent(void **state)
{
    (void)state;
    SAME("hello, world");
    char buffer[8] = "junk";
    assert_int_equal(format_unchecked(buffer, sizeof(buffer), ""), 0);
    assert_string_equal(buffer, "");
    SAME("100%%");
    SAME("%%%%x%%");
    GIVES("a%b", "a%%b");
}

static void test_signed_decimal(void **state)
{
    (void)state;
    SAME("%d", 0);
    SAME("%d", 42);
    SAME("%d", -42);
    SAME("%d", INT_MAX);
    SAME("%d", INT_MIN);
    SAME("%i", -7);
    SAME("[%d|%d|%d]", 1, -2, 3);
}

static void test_unsigned_and_hex(void **state)
{
    (void)state;
    SAME("%u", 0u);
    SAME("%u", 4000000000u);
    SAME("%u", UINT_MAX);
    SAME("%x", 0u);
    SAME("%x", 0xdeadbeefu);
    SAME("%X", 0xdeadbeefu);
    SAME("%x", UINT_MAX);
    SAME("%X", 0xabcdefu);
}

static void test_length_modifiers(void **state)
{
    (void)state;
    SAME("%ld", LONG_MIN);
    SAME("%ld", LONG_MAX);
    SAME("%lu", ULONG_MAX);
    SAME("%lx", 0x123456789abcdef0ul);
    SAME("%lld", (long long)INT64_MIN);
    SAME("%lld", (long long)INT64_MAX);
    SAME("%llu", (unsigned long long)UINT64_MAX);
    SAME("%llX", 0xfedcba9876543210ull);
    SAME("%zu", SIZE_MAX);
    SAME("%zx", (size_t)0x1000);
    SAME("%zd", (ssize_t)-5);
    /* An int argument is read as an int, not sign-extended garbage. */
    SAME("%x", -1);
    SAME("%u", -1);
}

static void test_int64_min(void **state)
{
    (void)state;
    GIVES("-9223372036854775808", "%lld", (long long)INT64_MIN);
    GIVES("-9223372036854775808", "%ld", (long)INT64_MIN);
    GIVES("-2147483648", "%d", INT_MIN);
    GIVES("[     -9223372036854775808]", "[%25lld]", (long long)INT64_MIN);
    SAME("[%025lld]", (long long)INT64_MIN);
    SAME("[%-25lld]", (long long)INT64_MIN);
}

static void test_width_and_flags(void **state)
{
    (void)state;
    SAME("[%5d]", 42);
    SAME("[%-5d]", 42);
    SAME("[%05d]", 42);
    SAME("[%05d]", -42);
    SAME("[%5d]", -42);
    SAME("[%-5d]", -42);
    char buffer[16];
    format_unchecked(buffer, sizeof(buffer), "[%-05d]", 42); /* '-' wins over '0' */
    assert_string_equal(buffer, "[42   ]");
    SAME("[%1d]", 12345);
    SAME("[%08x]", 0xbeefu);
    SAME("[%-8X]", 0xbeefu);
    SAME("[%020llu]", (unsigned long long)UINT64_MAX);
    SAME("[%3c]", 'z');
    SAME("[%-3c]", 'z');
    SAME("[%c%c%c]", 'a', 'b', 'c');
    SAME("[%10s]", "right");
    SAME("[%-10s]", "left");
    SAME("[%2s]", "longer than width");
}

static void test_string_precision(void **state)
{
    (void)state;
    SAME("[%.3s]", "abcdef");
    SAME("[%.0s]", "abcdef");
    SAME("[%.10s]", "abc");
    SAME("[%6.2s]", "abcdef");
    SAME("[%-6.2s]", "abcdef");
    SAME("[%s]", "");
    /* Precision stops reading: the string need not be NUL-terminated. */
    const char unterminated[3] = {'x', 'y', 'z'};
    GIVES("[xy]", "[%.2s]", unterminated);
}

static void test_null_string(void **state)
{
    (void)state;
    const char *volatile nothing = NULL;
    GIVES("(null)", "%s", nothing);
    GIVES("[  (null)]", "[%8s]", nothing);
}

static void test_pointer(void **state)
{
    (void)state;
    GIVES("0x0000000000000000", "%p", (void *)0);
    GIVES("0x00000000deadbeef", "%p", (void *)0xdeadbeefull);
    GIVES("0xffff800000001000", "%p", (void *)0xffff800000001000ull);
    int local;
    char expected[32];
    snprintf(expected, sizeof(expected), "0x%016llx", (unsigned long long)(uintptr_t)&local);
    GIVES(expected, "%p", (void *)&local);
}

static void test_unknown_and_trailing(void **state)
{
    (void)state;
    char buffer[64];
    assert_int_equal(format_unchecked(buffer, sizeof(buffer), "a%qb"), 4);
    assert_string_equal(buffer, "a%qb");
    assert_int_equal(format_unchecked(buffer, sizeof(buffer), "abc%"), 3);
    assert_string_equal(buffer, "abc");
    assert_int_equal(format_unchecked(buffer, sizeof(buffer), "abc%-08"), 3);
    assert_string_equal(buffer, "abc");
}

/* The return value is the full length; the buffer holds a NUL-terminated
 * prefix; the bytes after `size` are never touched. */
static void test_truncation(void **state)
{
    (void)state;
    const char *full = "hello world 12345";
    const int full_length = (int)strlen(full);
    for (size_t size = 0; size <= 24; size++) {
        char buffer[32];
        memset(buffer, 'X', sizeof(buffer));
        int length = format_string(buffer, size, "%s %s %d", "hello", "world", 12345);
        assert_int_equal(length, full_length);
        if (size > 0) {
            size_t kept = size - 1 < (size_t)full_length ? size - 1 : (size_t)full_length;
            assert_int_equal(strlen(buffer), kept);
            assert_memory_equal(buffer, full, kept);
        }
        for (size_t i = size; i < sizeof(buffer); i++)
            assert_int_equal(buffer[i], 'X');
    }
}

static void test_truncation_matches_snprintf(void **state)
{
    (void)state;
    for (size_t size = 1; size < 40; size++) {
        char ours[64], theirs[64];
        int our_length = format_string(ours, size, "[%-8s|%08x|%5d]", "ab", 0x1234u, -77);
        int their_length = snprintf(theirs, size, "[%-8s|%08x|%5d]", "ab", 0x1234u, -77);
        assert_int_equal(our_length, their_length);
        assert_string_equal(ours, theirs);
    }
}

static void test_size_zero_writes_nothing(void **state)
{
    (void)state;
    char buffer[4] = {'Q', 'Q', 'Q', 'Q'};
    assert_int_equal(format_string(buffer, 0, "%d", 123456), 6);
    assert_memory_equal(buffer, "QQQQ", 4);
    assert_int_equal(format_string(NULL, 0, "%s", "counted"), 7);
}

/* A sink that collects characters, to use format_to directly. */
struct collector {
    char text[128];
    int count;
};

static void collect(void *context, char character)
{
    struct collector *collector = context;
    if (collector->count < (int)sizeof(collector->text) - 1)
        collector->text[collector->count] = character;
    collector->count++;
}

static int format_to_collector(struct collector *collector, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    int produced = format_to(collect, collector, format, arguments);
    va_end(arguments);
    return produced;
}

static void test_format_to_sink(void **state)
{
    (void)state;
    struct collector collector = {.count = 0};
    int produced = format_to_collector(&collector, "core %u: %s=%#", 3u, "apic");
    collector.text[collector.count] = '\0';
    assert_int_equal(produced, collector.count);
    assert_string_equal(collector.text, "core 3: apic=%#");
    /* The caller's va_list is usable again: format_to works on a copy. */
    memset(&collector, 0, sizeof(collector));
    produced = format_to_collector(&collector, "%c", 0);
    assert_int_equal(produced, 1);
    assert_int_equal(collector.count, 1);
    assert_int_equal(collector.text[0], '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_text_and_percent),
        cmocka_unit_test(test_signed_decimal),
        cmocka_unit_test(test_unsigned_and_hex),
        cmocka_unit_test(test_length_modifiers),
        cmocka_unit_test(test_int64_min),
        cmocka_unit_test(test_width_and_flags),
        cmocka_unit_test(test_string_precision),
        cmocka_unit_test(test_null_string),
        cmocka_unit_test(test_pointer),
        cmocka_unit_test(test_unknown_and_trailing),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_truncation_matches_snprintf),
        cmocka_unit_test(test_size_zero_writes_nothing),
        cmocka_unit_test(test_format_to_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
