/* keyboard_map.c: HID usages to terminal bytes on a US layout, and PS/2
 * scan code set 1 to HID usages (formica/keyboard_map.h). */
#include <formica/keyboard_map.h>
#include <string.h>

#define ESCAPE 0x1b
#define DELETE 0x7f
#define SCAN_EXTENDED 0xe0
#define SCAN_PAUSE 0xe1
#define SCAN_PAUSE_BYTES 5 /* after 0xe1: 1d 45 e1 9d c5 */
#define SCAN_RELEASE 0x80
#define SCAN_FAKE_SHIFT 0x2a /* e0 2a / e0 aa around some extended keys */
#define SCAN_FAKE_RIGHT_SHIFT 0x36

/* Usages 0x04..0x38: what each types without shift ([0]) and with it ([1]). */
#define FIRST_PRINTING_USAGE 0x04
#define LAST_PRINTING_USAGE 0x38
#define PRINTING_USAGES (LAST_PRINTING_USAGE - FIRST_PRINTING_USAGE + 1)
static const char layout[2][PRINTING_USAGES + 1] = {
    "abcdefghijklmnopqrstuvwxyz1234567890\r\x1b\x7f\t -=[]\\#;'`,./",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()\r\x1b\x7f\t _+{}|~:\"~<>?",
};

#define USAGE_LETTER_A 0x04
#define USAGE_LETTER_Z 0x1d
/* The keypad (num lock taken as on): 0x54..0x63. */
static const char keypad[] = "/*-+\r1234567890.";
#define FIRST_KEYPAD_USAGE 0x54
#define LAST_KEYPAD_USAGE 0x63
_Static_assert(sizeof(keypad) - 1 == LAST_KEYPAD_USAGE - FIRST_KEYPAD_USAGE + 1, "one a usage");

/* Keys that send an escape sequence, as a VT100-style terminal does. */
struct sequence {
    uint8_t usage;
    const char *bytes;
};
static const struct sequence sequences[] = {
    {0x49, "\x1b[2~"}, /* Insert */
    {0x4a, "\x1b[H"},  /* Home */
    {0x4b, "\x1b[5~"}, /* Page Up */
    {0x4c, "\x1b[3~"}, /* Delete */
    {0x4d, "\x1b[F"},  /* End */
    {0x4e, "\x1b[6~"}, /* Page Down */
    {0x4f, "\x1b[C"},  /* Right */
    {0x50, "\x1b[D"},  /* Left */
    {0x51, "\x1b[B"},  /* Down */
    {0x52, "\x1b[A"},  /* Up */
};

static int copy_sequence(const char *bytes, uint8_t out[KEYBOARD_MAX_BYTES])
{
    int length = (int)strlen(bytes);
    memcpy(out, bytes, (size_t)length);
    return length;
}

static int printing_key(const struct keyboard_state *state, uint8_t usage,
                        uint8_t out[KEYBOARD_MAX_BYTES])
{
    bool shift = (state->modifiers & KEYBOARD_SHIFT) != 0;
    bool letter = usage >= USAGE_LETTER_A && usage <= USAGE_LETTER_Z;
    if (letter && state->caps_lock)
        shift = !shift;
    uint8_t byte = (uint8_t)layout[shift ? 1 : 0][usage - FIRST_PRINTING_USAGE];
    if (state->modifiers & KEYBOARD_CTRL) {
        if (letter)
            byte = (uint8_t)(usage - USAGE_LETTER_A + 1); /* Ctrl-A is 0x01 */
        else if (byte == '[' || byte == '{')
            byte = ESCAPE;
        else if (byte == ' ' || byte == '@')
            byte = 0;
    }
    out[0] = byte;
    return 1;
}

int keyboard_key(struct keyboard_state *state, uint8_t usage, bool pressed,
                 uint8_t out[KEYBOARD_MAX_BYTES])
{
    if (usage >= KEYBOARD_USAGE_FIRST_MODIFIER && usage <= KEYBOARD_USAGE_LAST_MODIFIER) {
        uint8_t bit = (uint8_t)(1u << (usage - KEYBOARD_USAGE_FIRST_MODIFIER));
        state->modifiers = pressed ? state->modifiers | bit : state->modifiers & (uint8_t)~bit;
        return 0;
    }
    if (!pressed)
        return 0;
    if (usage == KEYBOARD_USAGE_CAPS_LOCK) {
        state->caps_lock = !state->caps_lock;
        return 0;
    }
    if (usage >= FIRST_PRINTING_USAGE && usage <= LAST_PRINTING_USAGE)
        return printing_key(state, usage, out);
    if (usage >= FIRST_KEYPAD_USAGE && usage <= LAST_KEYPAD_USAGE) {
        out[0] = (uint8_t)keypad[usage - FIRST_KEYPAD_USAGE];
        return 1;
    }
    for (unsigned i = 0; i < sizeof(sequences) / sizeof(sequences[0]); i++)
        if (sequences[i].usage == usage)
            return copy_sequence(sequences[i].bytes, out);
    return 0; /* function keys and the like type nothing */
}

/* Scan codes 0x01..0x58 of set 1 (no prefix) as HID usages; 0 where none. */
static const uint8_t scan_to_usage[0x59] = {
    0,    0x29, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2d, 0x2e, 0x2a,
    0x2b, 0x14, 0x1a, 0x08, 0x15, 0x17, 0x1c, 0x18, 0x0c, 0x12, 0x13, 0x2f, 0x30, 0x28, 0xe0,
    0x04, 0x16, 0x07, 0x09, 0x0a, 0x0b, 0x0d, 0x0e, 0x0f, 0x33, 0x34, 0x35, 0xe1, 0x31, 0x1d,
    0x1b, 0x06, 0x19, 0x05, 0x11, 0x10, 0x36, 0x37, 0x38, 0xe5, 0x55, 0xe2, 0x2c, 0x39, 0x3a,
    0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x41, 0x42, 0x43, 0x53, 0x47, 0x5f, 0x60, 0x61, 0x56,
    0x5c, 0x5d, 0x5e, 0x57, 0x59, 0x5a, 0x5b, 0x62, 0x63, 0,    0,    0x64, 0x44, 0x45,
};

/* Extended codes (after 0xe0). */
struct extended_key {
    uint8_t code, usage;
};
static const struct extended_key extended_keys[] = {
    {0x1c, 0x58}, /* keypad Enter */
    {0x1d, 0xe4}, /* right Ctrl */
    {0x35, 0x54}, /* keypad / */
    {0x38, 0xe6}, /* right Alt */
    {0x47, 0x4a}, /* Home */
    {0x48, 0x52}, /* Up */
    {0x49, 0x4b}, /* Page Up */
    {0x4b, 0x50}, /* Left */
    {0x4d, 0x4f}, /* Right */
    {0x4f, 0x4d}, /* End */
    {0x50, 0x51}, /* Down */
    {0x51, 0x4e}, /* Page Down */
    {0x52, 0x49}, /* Insert */
    {0x53, 0x4c}, /* Delete */
    {0x5b, 0xe3}, /* left GUI */
    {0x5c, 0xe7}, /* right GUI */
};

static uint8_t extended_usage(uint8_t code)
{
    for (unsigned i = 0; i < sizeof(extended_keys) / sizeof(extended_keys[0]); i++)
        if (extended_keys[i].code == code)
            return extended_keys[i].usage;
    return 0; /* e0 2a / e0 36 (fake shifts), Print Screen, media keys: none */
}

bool ps2_decode(struct ps2_decoder *decoder, uint8_t byte, uint8_t *usage, bool *pressed)
{
    if (decoder->pause_bytes_left > 0) {
        decoder->pause_bytes_left--;
        return false;
    }
    if (byte == SCAN_EXTENDED) {
        decoder->extended = true;
        return false;
    }
    if (byte == SCAN_PAUSE) {
        decoder->pause_bytes_left = SCAN_PAUSE_BYTES;
        decoder->extended = false;
        return false;
    }
    bool extended = decoder->extended;
    decoder->extended = false;
    uint8_t code = byte & (uint8_t)~SCAN_RELEASE;
    if (extended && (code == SCAN_FAKE_SHIFT || code == SCAN_FAKE_RIGHT_SHIFT))
        return false;
    uint8_t found = extended                       ? extended_usage(code)
                    : code < sizeof(scan_to_usage) ? scan_to_usage[code]
                                                   : 0;
    if (found == 0)
        return false;
    *usage = found;
    *pressed = (byte & SCAN_RELEASE) == 0;
    return true;
}
