/* hid_keyboard.h: a HID boot keyboard's reports turned into typed bytes:
 * a key that appears in a report is pressed, one that leaves it released
 * (lib/keyboard_map.c types them); a key held down repeats after 500 ms,
 * 30 times a second, as PC keyboards do (USB keyboards leave repeating to
 * the host). */
#pragma once
#include <formica/keyboard_map.h>
#include <stdbool.h>
#include <stdint.h>

#define HID_BOOT_REPORT_BYTES 8 /* modifiers, reserved, six key usages */

struct hid_keyboard {
    uint8_t previous[HID_BOOT_REPORT_BYTES];
    struct keyboard_state state;
    uint8_t repeating; /* the usage that repeats, or 0 */
    uint64_t repeat_at_us;
};

/* Takes one report; the bytes it types are put into the console input.
 * Returns how many bytes it typed. */
uint64_t hid_keyboard_report(struct hid_keyboard *keyboard, const volatile uint8_t *report,
                             uint64_t now_us);
/* Types the held key again when its time came; the bytes typed. */
uint64_t hid_keyboard_repeat(struct hid_keyboard *keyboard, uint64_t now_us);
/* Microseconds until the next repeat is due (0: now), or UINT64_MAX when none is. */
uint64_t hid_keyboard_next_repeat(const struct hid_keyboard *keyboard, uint64_t now_us);
