/* ps2_keyboard.c: the PS/2 keyboard behind the i8042 controller, part of
 * the kernel's console like the serial port (docs/drivers.md says why it is
 * not a driver process). At boot the controller is found (a missing one
 * reads 0xff for ever), set to interrupt on IRQ 1 with scan code
 * translation (set 1) and the mouse port off; each interrupt decodes the
 * bytes into keys (lib/keyboard_map.c, US layout) and puts what they type
 * into the console input (kernel/console_input.h). Every wait is bounded. */
#include "ps2_keyboard.h"
#include "console.h"
#include "console_input.h"
#include "cpu.h"
#include "irq.h"
#include "lapic.h"
#include "x86.h"
#include <formica/keyboard_map.h>

#define DATA_PORT 0x60
#define STATUS_PORT 0x64 /* read: status; write: controller command */
#define STATUS_OUTPUT_FULL 0x01
#define STATUS_INPUT_FULL 0x02
#define STATUS_MOUSE_DATA 0x20
#define COMMAND_READ_CONFIG 0x20
#define COMMAND_WRITE_CONFIG 0x60
#define COMMAND_DISABLE_MOUSE 0xa7
#define COMMAND_DISABLE_KEYBOARD 0xad
#define COMMAND_ENABLE_KEYBOARD 0xae
#define CONFIG_KEYBOARD_INTERRUPT 0x01
#define CONFIG_MOUSE_INTERRUPT 0x02
#define CONFIG_KEYBOARD_CLOCK_OFF 0x10
#define CONFIG_MOUSE_CLOCK_OFF 0x20
#define CONFIG_TRANSLATE 0x40 /* the controller hands over scan code set 1 */
#define KEYBOARD_ENABLE_SCANNING 0xf4
#define KEYBOARD_IRQ 1
#define CONTROLLER_BUFFER_BYTES 16 /* more than this in a flush: no controller there */
#define WAIT_SPINS 100000
#define BYTES_PER_INTERRUPT 32

static struct ps2_decoder decoder;
static struct keyboard_state keyboard;

static bool wait_for(uint8_t mask, bool set)
{
    for (int spin = 0; spin < WAIT_SPINS; spin++) {
        if (((port_in8(STATUS_PORT) & mask) != 0) == set)
            return true;
        cpu_relax();
    }
    return false;
}

static bool send_command(uint8_t command)
{
    if (!wait_for(STATUS_INPUT_FULL, false))
        return false;
    port_out8(STATUS_PORT, command);
    return true;
}

static bool send_data(uint8_t data)
{
    if (!wait_for(STATUS_INPUT_FULL, false))
        return false;
    port_out8(DATA_PORT, data);
    return true;
}

/* Empties the output buffer; false when it never empties (no controller). */
static bool flush_output(void)
{
    for (int count = 0; count < CONTROLLER_BUFFER_BYTES; count++) {
        if ((port_in8(STATUS_PORT) & STATUS_OUTPUT_FULL) == 0)
            return true;
        port_in8(DATA_PORT);
    }
    return false;
}

static bool read_config(uint8_t *config)
{
    if (!send_command(COMMAND_READ_CONFIG) || !wait_for(STATUS_OUTPUT_FULL, true))
        return false;
    *config = port_in8(DATA_PORT);
    return true;
}

static void type_byte(uint8_t byte)
{
    uint8_t usage, out[KEYBOARD_MAX_BYTES];
    bool pressed;
    if (!ps2_decode(&decoder, byte, &usage, &pressed))
        return;
    int count = keyboard_key(&keyboard, usage, pressed, out);
    if (count > 0)
        console_input_put(out, (uint64_t)count);
}

/* IRQ 1 on core 0: every byte the controller holds (the keyboard's ACK of
 * a command, 0xfa, decodes to no key). Edge-triggered: no mask to lift. */
static void keyboard_interrupt(struct trap_frame *frame)
{
    (void)frame;
    for (int i = 0; i < BYTES_PER_INTERRUPT; i++) {
        uint8_t status = port_in8(STATUS_PORT);
        if ((status & STATUS_OUTPUT_FULL) == 0)
            break;
        uint8_t byte = port_in8(DATA_PORT);
        if ((status & STATUS_MOUSE_DATA) == 0)
            type_byte(byte);
    }
    this_cpu()->device_interrupts++;
    lapic_end_of_interrupt();
}

/* Both ports off, the buffer empty, then the configuration: keyboard
 * interrupt and translation on, the mouse's interrupt and clock off. */
static bool configure_controller(void)
{
    uint8_t config;
    if (!send_command(COMMAND_DISABLE_KEYBOARD) || !send_command(COMMAND_DISABLE_MOUSE))
        return false;
    if (!flush_output() || !read_config(&config))
        return false;
    config |= CONFIG_KEYBOARD_INTERRUPT | CONFIG_TRANSLATE | CONFIG_MOUSE_CLOCK_OFF;
    config &= (uint8_t) ~(CONFIG_MOUSE_INTERRUPT | CONFIG_KEYBOARD_CLOCK_OFF);
    return send_command(COMMAND_WRITE_CONFIG) && send_data(config);
}

void ps2_keyboard_start(void)
{
    if (port_in8(STATUS_PORT) == 0xff || !configure_controller()) {
        kprintf("keyboard: no PS/2 controller (i8042)\n");
        return;
    }
    long gsi = irq_attach_kernel(KEYBOARD_IRQ, keyboard_interrupt);
    if (gsi < 0) {
        kprintf("keyboard: PS/2 IRQ %u cannot be routed (error %ld); no PS/2 keyboard\n",
                KEYBOARD_IRQ, gsi);
        return;
    }
    if (!send_command(COMMAND_ENABLE_KEYBOARD) || !send_data(KEYBOARD_ENABLE_SCANNING)) {
        kprintf("keyboard: the i8042 does not take commands; no PS/2 keyboard\n");
        return;
    }
    console_input_keyboard_ready(CONSOLE_KEYBOARD_PS2);
    kprintf("keyboard: PS/2 (i8042) on IRQ %u (GSI %ld), US layout\n", KEYBOARD_IRQ, gsi);
}
