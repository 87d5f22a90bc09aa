/* keyboard_map.h: from keys to the bytes a terminal sends, on a US layout.
 * Both keyboards speak in USB HID usage IDs (the keyboard page, 0x07): the
 * USB keyboard's boot reports carry them, and the PS/2 keyboard's scan codes
 * (set 1, what the i8042 hands over with translation on) are turned into
 * them here. A key press gives the bytes a serial terminal would send for
 * it: letters and symbols, CR for Enter, DEL for Backspace, control codes
 * with Ctrl, ESC [ A for the arrow keys. Pure logic: the m-kernel (PS/2),
 * the USB driver and the host unit tests link it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* The boot report's modifier byte: bit i is usage 0xe0 + i. */
#define KEYBOARD_LEFT_CTRL 0x01
#define KEYBOARD_LEFT_SHIFT 0x02
#define KEYBOARD_LEFT_ALT 0x04
#define KEYBOARD_LEFT_GUI 0x08
#define KEYBOARD_RIGHT_CTRL 0x10
#define KEYBOARD_RIGHT_SHIFT 0x20
#define KEYBOARD_RIGHT_ALT 0x40
#define KEYBOARD_RIGHT_GUI 0x80
#define KEYBOARD_CTRL (KEYBOARD_LEFT_CTRL | KEYBOARD_RIGHT_CTRL)
#define KEYBOARD_SHIFT (KEYBOARD_LEFT_SHIFT | KEYBOARD_RIGHT_SHIFT)

#define KEYBOARD_USAGE_CAPS_LOCK 0x39
#define KEYBOARD_USAGE_FIRST_MODIFIER 0xe0
#define KEYBOARD_USAGE_LAST_MODIFIER 0xe7
/* The most bytes one key press types (ESC [ 5 ~ for Page Up). */
#define KEYBOARD_MAX_BYTES 4

/* What a keyboard is doing: the modifiers held and caps lock. */
struct keyboard_state {
    uint8_t modifiers; /* KEYBOARD_* bits */
    bool caps_lock;
};

/* A key went down (`pressed`) or up. Modifiers and caps lock change the
 * state; a press of another key writes the bytes it types to `out` and
 * returns how many (0 for a key that types nothing, and for a release). */
int keyboard_key(struct keyboard_state *state, uint8_t usage, bool pressed,
                 uint8_t out[KEYBOARD_MAX_BYTES]);

/* PS/2 scan code set 1: an 0xe0 byte makes the next code an extended key,
 * 0xe1 starts the Pause key's sequence (ignored). */
struct ps2_decoder {
    bool extended;
    uint8_t pause_bytes_left;
};

/* Feeds one byte from the controller; true with *usage and *pressed when
 * it ends a key's press or release that has a HID usage. */
bool ps2_decode(struct ps2_decoder *decoder, uint8_t byte, uint8_t *usage, bool *pressed);
