/* hid_keyboard.c: boot reports to key presses and releases, and the
 * repeat of a held key (hid_keyboard.h). */
#include "hid_keyboard.h"
#include <formica/device.h>
#include <formica/syscalls.h>
#include <stdint.h>

#define REPORT_MODIFIERS 0
#define REPORT_FIRST_KEY 2
#define USAGE_ERROR_ROLLOVER 0x01 /* too many keys down: the report says nothing */
#define REPEAT_DELAY_US 500000
#define REPEAT_PERIOD_US 33333

static uint64_t type_key(struct hid_keyboard *keyboard, uint8_t usage, bool pressed)
{
    uint8_t bytes[KEYBOARD_MAX_BYTES];
    int count = keyboard_key(&keyboard->state, usage, pressed, bytes);
    if (count <= 0)
        return 0;
    long taken = console_input(bytes, (uint64_t)count);
    return taken > 0 ? (uint64_t)taken : 0;
}

static bool holds(const uint8_t *report, uint8_t usage)
{
    for (int i = REPORT_FIRST_KEY; i < HID_BOOT_REPORT_BYTES; i++)
        if (report[i] == usage)
            return true;
    return false;
}

/* Modifier bits that changed, as presses and releases of usages 0xe0-0xe7. */
static void modifiers_changed(struct hid_keyboard *keyboard, uint8_t now)
{
    uint8_t changed = now ^ keyboard->previous[REPORT_MODIFIERS];
    for (int bit = 0; bit < 8; bit++)
        if (changed & (1u << bit))
            type_key(keyboard, (uint8_t)(KEYBOARD_USAGE_FIRST_MODIFIER + bit), (now >> bit) & 1);
}

uint64_t hid_keyboard_report(struct hid_keyboard *keyboard, const volatile uint8_t *report,
                             uint64_t now_us)
{
    uint8_t current[HID_BOOT_REPORT_BYTES];
    for (int i = 0; i < HID_BOOT_REPORT_BYTES; i++)
        current[i] = report[i];
    if (current[REPORT_FIRST_KEY] == USAGE_ERROR_ROLLOVER)
        return 0;
    uint64_t typed = 0;
    modifiers_changed(keyboard, current[REPORT_MODIFIERS]);
    for (int i = REPORT_FIRST_KEY; i < HID_BOOT_REPORT_BYTES; i++) {
        uint8_t usage = keyboard->previous[i];
        if (usage != 0 && !holds(current, usage)) {
            type_key(keyboard, usage, false);
            if (usage == keyboard->repeating)
                keyboard->repeating = 0;
        }
    }
    for (int i = REPORT_FIRST_KEY; i < HID_BOOT_REPORT_BYTES; i++) {
        uint8_t usage = current[i];
        if (usage == 0 || holds(keyboard->previous, usage))
            continue;
        uint64_t count = type_key(keyboard, usage, true);
        typed += count;
        if (count > 0) { /* the newest key that types is the one that repeats */
            keyboard->repeating = usage;
            keyboard->repeat_at_us = now_us + REPEAT_DELAY_US;
        }
    }
    for (int i = 0; i < HID_BOOT_REPORT_BYTES; i++)
        keyboard->previous[i] = current[i];
    return typed;
}

uint64_t hid_keyboard_repeat(struct hid_keyboard *keyboard, uint64_t now_us)
{
    if (keyboard->repeating == 0 || now_us < keyboard->repeat_at_us)
        return 0;
    keyboard->repeat_at_us = now_us + REPEAT_PERIOD_US;
    return type_key(keyboard, keyboard->repeating, true);
}

uint64_t hid_keyboard_next_repeat(const struct hid_keyboard *keyboard, uint64_t now_us)
{
    if (keyboard->repeating == 0)
        return UINT64_MAX;
    return keyboard->repeat_at_us > now_us ? keyboard->repeat_at_us - now_us : 0;
}
