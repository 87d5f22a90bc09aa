/* test_string.c: host unit tests of lib/string.c's memcpy and memset (string
 * instructions, eight bytes a step and a byte tail), built under other names so
 * the host's own functions stay in place: every length 0-80 at every alignment. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

void *formica_memcpy(void *destination, const void *source, size_t count);
void *formica_memset(void *destination, int value, size_t count);

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memcpy_every_length_and_alignment),
        cmocka_unit_test(test_memset_every_length_and_alignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
