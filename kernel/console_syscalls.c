/* console_syscalls.c: the console's system calls. Processes write to every
 * console and read what the serial port and the keyboards typed; a driver
 * (the USB keyboard's, servers/usb) puts typed bytes in and says when its
 * keyboard is ready. Every pointer is checked against the caller's memory. */
#include "console.h"
#include "console_input.h"
#include "cpu.h"
#include "device_state.h"
#include "process.h"
#include "scheduler.h"
#include "user_memory.h"
#include <formica/errors.h>
#include <formica/protocol/syscall_table.h>
#include <formica/syscalls.h>

#define CONSOLE_WRITE_LIMIT (1u << 20)

static struct process *current(void)
{
    return this_cpu()->current;
}

long sys_console_write(uint64_t buffer, uint64_t length)
{
    if (length > CONSOLE_WRITE_LIMIT)
        return -E_TOO_BIG;
    if (!user_range_ok(current()->root, buffer, length, false))
        return -E_FAULT;
    console_write_text((const char *)buffer, length);
    return (long)length;
}

/* A byte typed on the serial console or a keyboard, or -1 when none is waiting. */
static int console_read_byte(void)
{
    int byte = console_read_serial_byte();
    if (byte >= 0)
        return byte;
    uint8_t typed;
    return console_input_take(&typed, 1) == 1 ? typed : -1;
}

/* Polls the serial port and the keyboards' bytes once a timer tick: the
 * serial port raises no interrupt here, and a tick is quicker than typing. */
long sys_console_read(uint64_t buffer, uint64_t length)
{
    if (length == 0)
        return 0;
    if (!user_range_ok(current()->root, buffer, length, true))
        return -E_FAULT;
    for (;;) {
        /* checked again after every wait: the memory may have changed meanwhile */
        if (!user_range_ok(current()->root, buffer, length, true))
            return -E_FAULT;
        uint64_t count = 0;
        int byte;
        while (count < length && (byte = console_read_byte()) >= 0)
            ((char *)buffer)[count++] = (char)byte;
        if (count > 0) {
            console_input_reader_waits(false);
            return (long)count;
        }
        console_input_reader_waits(true);
        scheduler_block(WAIT_SLEEP, this_cpu()->timer_ticks + 1);
        if (current()->kill_requested) {
            console_input_reader_waits(false);
            scheduler_exit_current(-1);
        }
    }
}

long sys_console_input(uint64_t buffer, uint64_t length)
{
    if (!device_is_driver(current()))
        return -E_PERMISSION;
    if (length > CONSOLE_INPUT_LIMIT)
        return -E_TOO_BIG;
    uint8_t bytes[CONSOLE_INPUT_LIMIT];
    long error = copy_from_user(bytes, buffer, length);
    if (error != 0)
        return error;
    return (long)console_input_put(bytes, length);
}

long sys_keyboard_ready(uint32_t keyboard)
{
    if (!device_is_driver(current()))
        return -E_PERMISSION;
    if (keyboard != CONSOLE_KEYBOARD_USB)
        return -E_INVALID;
    console_input_keyboard_ready(keyboard);
    return 0;
}
