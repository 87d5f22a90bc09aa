/* test_string.c: host unit tests of lib/string.c's memcpy, memset (string
 * instructions, eight bytes a step and a byte tail) and memcmp (eight bytes a
 * step), built under other names so the host's own functions stay in place:
 * every length 0-80 at every alignment, long copies (memcpy's AVX steps)
 * and overlapping moves. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <formica/syscalls.h>

void *formica_memcpy(void *destination, const void *source, size_t count);
void *formica_memmove(void *destination, const void *source, size_t count);
void *formica_memset(void *destination, int value, size_t count);
int formica_memcmp(const void *left, const void *right, size_t count);

#define AREA 128

static void fill_pattern(uint8_t *area, uint8_t seed)
{
    for (int i = 0; i < AREA; i++)
        area[i] = (uint8_t)(seed + i * 7);
}

static void test_memcpy_every_length_and_alignment(void **state)
{
    (void)state;
    uint8_t source[AREA], ours[AREA], expected[AREA];
    fill_pattern(source, 3);
    for (size_t offset = 0; offset < 8; offset++)
        for (size_t length = 0; length <= 80; length++) {
            fill_pattern(ours, 200);
            fill_pattern(expected, 200);
            memcpy(expected + offset, source + 8 - offset, length);
            void *returned = formica_memcpy(ours + offset, source + 8 - offset, length);
            assert_ptr_equal(returned, ours + offset);
            assert_memory_equal(ours, expected, AREA); /* nothing outside touched */
        }
}

/* lib/start.S's flags, as the kernel sets them at start-up; the tests set
 * them as they need. */
uint64_t process_start_flags;

/* Long copies take the wide path (256-byte steps) when the start flags allow
 * it (and the host has AVX), else eight bytes a step: lengths around one, two
 * and sixteen steps, at every alignment, both ways. */
static void long_copies(uint64_t start_flags)
{
    process_start_flags = start_flags;
    enum { LONG_AREA = 4096 + 600 };
    static uint8_t source[LONG_AREA], ours[LONG_AREA], expected[LONG_AREA];
    for (size_t i = 0; i < LONG_AREA; i++)
        source[i] = (uint8_t)(i * 13 + i / 256);
    const size_t lengths[] = {255, 256, 257, 300, 511, 512, 513, 4095, 4096, 4097, 4096 + 300};
    for (size_t offset = 0; offset < 8; offset++)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            memset(ours, 0x5a, LONG_AREA);
            memset(expected, 0x5a, LONG_AREA);
            memcpy(expected + offset, source + 8 - offset, lengths[l]);
            void *returned = formica_memcpy(ours + offset, source + 8 - offset, lengths[l]);
            assert_ptr_equal(returned, ours + offset);
            assert_memory_equal(ours, expected, LONG_AREA);
        }
    process_start_flags = 0;
}

static void test_memcpy_long_copies(void **state)
{
    (void)state;
    long_copies(0);
    if (__builtin_cpu_supports("avx"))
        long_copies(START_WIDE_VECTORS);
}

/* Overlapping moves in both directions: memmove hands a move to a lower
 * address to memcpy, which must then read each piece before it writes over
 * it (the 8-16 byte words, the string steps, the 256-byte AVX steps). */
static void test_memmove_overlapping(void **state)
{
    (void)state;
    enum { MOVE_AREA = 1024 };
    static uint8_t ours[MOVE_AREA], expected[MOVE_AREA];
    const size_t lengths[] = {1, 7, 8, 9, 15, 16, 17, 31, 64, 255, 256, 257, 600};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
        for (size_t distance = 1; distance <= 40; distance++)
            for (int down = 0; down <= 1; down++) {
                for (size_t i = 0; i < MOVE_AREA; i++)
                    ours[i] = expected[i] = (uint8_t)(i * 11 + i / 256);
                size_t from = 100 + (down ? distance : 0), to = 100 + (down ? 0 : distance);
                memmove(expected + to, expected + from, lengths[l]);
                void *returned = formica_memmove(ours + to, ours + from, lengths[l]);
                assert_ptr_equal(returned, ours + to);
                assert_memory_equal(ours, expected, MOVE_AREA);
            }
}

static void test_memset_every_length_and_alignment(void **state)
{
    (void)state;
    uint8_t ours[AREA], expected[AREA];
    for (size_t offset = 0; offset < 8; offset++)
        for (size_t length = 0; length <= 80; length++) {
            fill_pattern(ours, 9);
            fill_pattern(expected, 9);
            memset(expected + offset, 0xA5, length);
            void *returned = formica_memset(ours + offset, 0x1A5, length); /* only the low byte */
            assert_ptr_equal(returned, ours + offset);
            assert_memory_equal(ours, expected, AREA);
        }
}

static int sign(int value)
{
    return value < 0 ? -1 : value > 0;
}

/* Equal areas, then one byte changed up and down at every place: the sign
 * agrees with the host's memcmp (bytes compare as unsigned). */
static void test_memcmp_every_length_alignment_and_difference(void **state)
{
    (void)state;
    uint8_t left[AREA], right[AREA];
    for (size_t offset = 0; offset < 8; offset++)
        for (size_t length = 0; length <= 80; length++) {
            fill_pattern(left, 5);
            fill_pattern(right, 5);
            assert_int_equal(formica_memcmp(left + offset, right + 8 - offset, length),
                             sign(memcmp(left + offset, right + 8 - offset, length)));
            memcpy(right + 8 - offset, left + offset, length);
            assert_int_equal(formica_memcmp(left + offset, right + 8 - offset, length), 0);
            for (size_t at = 0; at < length; at++)
                for (int change = -1; change <= 1; change += 2) {
                    uint8_t kept = right[8 - offset + at];
                    right[8 - offset + at] = (uint8_t)(kept + change * 0x81);
                    assert_int_equal(formica_memcmp(left + offset, right + 8 - offset, length),
                                     sign(memcmp(left + offset, right + 8 - offset, length)));
                    right[8 - offset + at] = kept;
                }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memcpy_every_length_and_alignment),
        cmocka_unit_test(test_memcpy_long_copies),
        cmocka_unit_test(test_memmove_overlapping),
        cmocka_unit_test(test_memset_every_length_and_alignment),
        cmocka_unit_test(test_memcmp_every_length_alignment_and_difference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
