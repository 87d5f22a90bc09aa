/* test_keyboard_map.c: host unit tests of lib/keyboard_map.c, the US layout
 * both keyboards type with: HID usages to terminal bytes (shift, caps lock,
 * Ctrl, Enter, Backspace, arrows, the keypad) and PS/2 scan code set 1 to
 * HID usages (make and break codes, 0xe0 extended keys, fake shifts, Pause),
 * typed through both paths as a whole line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <formica/keyboard_map.h>

#define USAGE_A 0x04
#define USAGE_C 0x06
#define USAGE_1 0x1e
#define USAGE_ENTER 0x28
#define USAGE_BACKSPACE 0x2a
#define USAGE_SPACE 0x2c
#define USAGE_SLASH 0x38
#define USAGE_UP 0x52
#define USAGE_PAGE_UP 0x4b
#define USAGE_F1 0x3a
#define USAGE_KEYPAD_7 0x5f
#define USAGE_LEFT_SHIFT 0xe1
#define USAGE_RIGHT_CTRL 0xe4

/* The bytes one press types, as a string. */
static const char *typed(struct keyboard_state *state, uint8_t usage)
{
    static char text[KEYBOARD_MAX_BYTES + 1];
    uint8_t out[KEYBOARD_MAX_BYTES];
    int count = keyboard_key(state, usage, true, out);
    assert_in_range(count, 0, KEYBOARD_MAX_BYTES);
    memcpy(text, out, (size_t)count);
    text[count] = '\0';
    assert_int_equal(keyboard_key(state, usage, false, out), 0); /* releases type nothing */
    return text;
}

static void test_letters_digits_and_symbols(void **unused)
{
    (void)unused;
    struct keyboard_state state = {0};
    assert_string_equal(typed(&state, USAGE_A), "a");
    assert_string_equal(typed(&state, 0x1d), "z");
    assert_string_equal(typed(&state, USAGE_1), "1");
    assert_string_equal(typed(&state, 0x27), "0");
    assert_string_equal(typed(&state, USAGE_SPACE), " ");
    assert_string_equal(typed(&state, USAGE_SLASH), "/");
    assert_string_equal(typed(&state, 0x2d), "-");
    assert_string_equal(typed(&state, 0x31), "\\");
    assert_string_equal(typed(&state, 0x34), "'");
}

static void test_shift_and_caps_lock(void **unused)
{
    (void)unused;
    struct keyboard_state state = {0};
    uint8_t out[KEYBOARD_MAX_BYTES];
    assert_int_equal(keyboard_key(&state, USAGE_LEFT_SHIFT, true, out), 0);
    assert_string_equal(typed(&state, USAGE_A), "A");
    assert_string_equal(typed(&state, USAGE_1), "!");
    assert_string_equal(typed(&state, USAGE_SLASH), "?");
    assert_string_equal(typed(&state, 0x34), "\"");
    keyboard_key(&state, USAGE_LEFT_SHIFT, false, out);
    assert_string_equal(typed(&state, USAGE_A), "a");
    assert_string_equal(typed(&state, 0x39), ""); /* caps lock on */
    assert_string_equal(typed(&state, USAGE_A), "A");
    assert_string_equal(typed(&state, USAGE_1), "1"); /* caps lock leaves digits alone */
    keyboard_key(&state, USAGE_LEFT_SHIFT, true, out);
    assert_string_equal(typed(&state, USAGE_A), "a"); /* shift undoes it for letters */
    keyboard_key(&state, USAGE_LEFT_SHIFT, false, out);
    assert_string_equal(typed(&state, 0x39), ""); /* caps lock off */
    assert_string_equal(typed(&state, USAGE_A), "a");
}

static void test_control_keys(void **unused)
{
    (void)unused;
    struct keyboard_state state = {0};
    uint8_t out[KEYBOARD_MAX_BYTES];
    assert_string_equal(typed(&state, USAGE_ENTER), "\r");
    assert_string_equal(typed(&state, 0x58), "\r"); /* keypad Enter */
    assert_string_equal(typed(&state, USAGE_BACKSPACE), "\x7f");
    assert_string_equal(typed(&state, 0x2b), "\t");
    assert_string_equal(typed(&state, 0x29), "\x1b");
    keyboard_key(&state, USAGE_RIGHT_CTRL, true, out);
    assert_string_equal(typed(&state, USAGE_C), "\x03");
    assert_string_equal(typed(&state, USAGE_A), "\x01");
    keyboard_key(&state, USAGE_RIGHT_CTRL, false, out);
    assert_string_equal(typed(&state, USAGE_C), "c");
}

static void test_escape_sequences_keypad_and_silent_keys(void **unused)
{
    (void)unused;
    struct keyboard_state state = {0};
    assert_string_equal(typed(&state, USAGE_UP), "\x1b[A");
    assert_string_equal(typed(&state, 0x50), "\x1b[D");
    assert_string_equal(typed(&state, USAGE_PAGE_UP), "\x1b[5~");
    assert_string_equal(typed(&state, USAGE_KEYPAD_7), "7");
    assert_string_equal(typed(&state, 0x63), ".");
    assert_string_equal(typed(&state, USAGE_F1), "");
    assert_string_equal(typed(&state, 0x00), "");
    assert_string_equal(typed(&state, 0xff), "");
}

/* Feeds scan codes; returns the bytes typed through keyboard_key. */
static const char *scanned(const uint8_t *codes, size_t count)
{
    static char text[64];
    struct ps2_decoder decoder = {0};
    struct keyboard_state state = {0};
    size_t length = 0;
    for (size_t i = 0; i < count; i++) {
        uint8_t usage, out[KEYBOARD_MAX_BYTES];
        bool pressed;
        if (!ps2_decode(&decoder, codes[i], &usage, &pressed))
            continue;
        int typed_count = keyboard_key(&state, usage, pressed, out);
        assert_true(length + (size_t)typed_count < sizeof(text));
        memcpy(text + length, out, (size_t)typed_count);
        length += (size_t)typed_count;
    }
    text[length] = '\0';
    return text;
}

static void test_scan_codes_type_a_command_line(void **unused)
{
    (void)unused;
    /* "ls /" Enter, then "run Hello!" Enter with the left shift held for H and !. */
    static const uint8_t codes[] = {0x26, 0xa6, 0x1f, 0x9f, 0x39, 0xb9, 0x35, 0xb5, 0x1c,
                                    0x9c, 0x13, 0x93, 0x16, 0x96, 0x31, 0xb1, 0x39, 0xb9,
                                    0x2a, 0x23, 0xa3, 0xaa, 0x12, 0x92, 0x26, 0xa6, 0x26,
                                    0xa6, 0x18, 0x98, 0x2a, 0x02, 0x82, 0xaa, 0x1c, 0x9c};
    assert_string_equal(scanned(codes, sizeof(codes)), "ls /\rrun Hello!\r");
}

static void test_extended_codes_fake_shifts_and_pause(void **unused)
{
    (void)unused;
    /* Up (e0 48 / e0 c8), keypad Enter, a Print Screen's fake shift (e0 2a e0 37 ... ),
     * Pause (e1 1d 45 e1 9d c5), then right Ctrl + c. */
    static const uint8_t codes[] = {0xe0, 0x48, 0xe0, 0xc8, 0xe0, 0x1c, 0xe0, 0x9c, 0xe0, 0x2a,
                                    0xe0, 0x37, 0xe0, 0xb7, 0xe0, 0xaa, 0xe1, 0x1d, 0x45, 0xe1,
                                    0x9d, 0xc5, 0xe0, 0x1d, 0x2e, 0xae, 0xe0, 0x9d, 0x2e, 0xae};
    assert_string_equal(scanned(codes, sizeof(codes)), "\x1b[A\r\x03"
                                                       "c");
}

static void test_unknown_scan_codes_type_nothing(void **unused)
{
    (void)unused;
    static const uint8_t codes[] = {0x00, 0x54, 0x55, 0x59, 0x7f, 0xfa, 0xe0, 0x10, 0x1e, 0x9e};
    assert_string_equal(scanned(codes, sizeof(codes)), "a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_letters_digits_and_symbols),
        cmocka_unit_test(test_shift_and_caps_lock),
        cmocka_unit_test(test_control_keys),
        cmocka_unit_test(test_escape_sequences_keypad_and_silent_keys),
        cmocka_unit_test(test_scan_codes_type_a_command_line),
        cmocka_unit_test(test_extended_codes_fake_shifts_and_pause),
        cmocka_unit_test(test_unknown_scan_codes_type_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
