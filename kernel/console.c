/* console.c: formatted kernel output to COM1, the VGA text screen and the
 * framebuffer, and console input from COM1 and the keyboards. A line is
 * formatted into a local buffer first and written under the console lock,
 * so output from many cores stays whole. The boot core sets the devices up
 * (mkernel/console_setup.c). */
#include "console.h"
#include "atomic.h"
#include "console_input.h"
#include "cpu.h"
#include "shared.h"
#include "x86.h"
#include <format.h>
#include <stdarg.h>

#define TAB_STOP 8

/* One character to COM1 (the caller knows the machine has it). */
static void serial_put(char character)
{
    for (int spins = 0; spins < 100000 && (port_in8(COM1 + 5) & 0x20) == 0; spins++)
        cpu_relax();
    port_out8(COM1, (uint8_t)character);
}

#define VGA_CRTC_INDEX 0x3d4
#define VGA_CRTC_DATA 0x3d5
#define VGA_CRTC_START_HIGH 0x0c
#define VGA_CRTC_START_LOW 0x0d

void console_vga_show_from(uint32_t row)
{
    uint32_t cell = row * VGA_COLUMNS;
    port_out8(VGA_CRTC_INDEX, VGA_CRTC_START_HIGH);
    port_out8(VGA_CRTC_DATA, (uint8_t)(cell >> 8));
    port_out8(VGA_CRTC_INDEX, VGA_CRTC_START_LOW);
    port_out8(VGA_CRTC_DATA, (uint8_t)cell);
}

static uint16_t *vga_line(const struct console_state *console, uint32_t row)
{
    return console->vga + (console->vga_top + row) * VGA_COLUMNS;
}

/* One line up: the screen's window moves down a row of text memory (only
 * the new bottom row is written); at the end of the memory, the screen's
 * rows are copied back to its start, once every ~180 lines. Writes to text
 * memory are slow (emulated, or across the bus), so each one counts. */
static void vga_scroll(struct console_state *console)
{
    if (console->vga_top + VGA_ROWS < VGA_MEMORY_ROWS) {
        console->vga_top++;
    } else {
        for (int i = 0; i < VGA_COLUMNS * (VGA_ROWS - 1); i++)
            console->vga[i] = vga_line(console, 1)[i];
        console->vga_top = 0;
    }
    uint16_t *bottom = vga_line(console, VGA_ROWS - 1);
    for (int i = 0; i < VGA_COLUMNS; i++)
        bottom[i] = VGA_ATTRIBUTE | ' ';
    console->vga_row = VGA_ROWS - 1;
    console_vga_show_from(console->vga_top);
}

static void vga_put(struct console_state *console, char character);

/* A tab: spaces to the next stop (apart, so the usual character's vga_put,
 * which tail-calls it, saves no registers for the loop). */
static __attribute__((noinline)) void vga_tab(struct console_state *console)
{
    do
        vga_put(console, ' ');
    while (console->vga_column % TAB_STOP != 0);
}

static void vga_put(struct console_state *console, char character)
{
    if (console->vga == NULL)
        return;
    if ((uint8_t)character >= 0x20) { /* the usual character: tested first */
        vga_line(console, console->vga_row)[console->vga_column] =
            VGA_ATTRIBUTE | (uint8_t)character;
        if (++console->vga_column == VGA_COLUMNS) {
            console->vga_column = 0;
            console->vga_row++;
        }
    } else if (character == '\t') {
        vga_tab(console);
        return;
    } else if (character == '\n') {
        console->vga_column = 0;
        console->vga_row++;
    } else if (character == '\r') {
        console->vga_column = 0;
    } else if (character == '\b') {
        if (console->vga_column > 0)
            console->vga_column--;
    } else {
        return; /* other control codes draw nothing, as on a terminal */
    }
    if (console->vga_row == VGA_ROWS)
        vga_scroll(console);
}

/* One character to every screen; `serial`: console->serial, read once a
 * write (the port I/O between characters would make the compiler read it
 * again for each). */
static void console_put(struct console_state *console, char character, bool serial)
{
    if (serial) {
        if (character == '\n')
            serial_put('\r');
        serial_put(character);
    }
    vga_put(console, character);
    if (console->framebuffer.pixels != NULL) /* no call per character without one */
        framebuffer_console_put(&console->framebuffer, character);
}

/* Every screen shows the text; the framebuffer is drawn once per write. */
static void console_write_bytes(const char *text, uint64_t length)
{
    struct console_state *console = &kernel_shared->console;
    bool panicking = atomic_load_acquire(&kernel_shared->panicking) != 0;
    framebuffer_console_set_colour(&console->framebuffer,
                                   panicking ? CONSOLE_COLOUR_PANIC : CONSOLE_COLOUR_TEXT);
    bool serial = console->serial;
    for (uint64_t i = 0; i < length; i++)
        console_put(console, text[i], serial);
    framebuffer_console_flush(&console->framebuffer);
}

static void console_write(const char *text)
{
    uint64_t length = 0;
    while (text[length] != '\0')
        length++;
    console_write_bytes(text, length);
}

void console_write_text(const char *text, uint64_t length)
{
    struct console_state *console = &kernel_shared->console;
    uint64_t flags = spin_lock(&console->lock);
    console_write_bytes(text, length);
    spin_unlock(&console->lock, flags);
}

int console_read_serial_byte(void)
{
    if (!kernel_shared->console.serial || (port_in8(COM1 + 5) & 0x01) == 0)
        return -1;
    return port_in8(COM1);
}

static void console_print(int take_lock, const char *format, va_list arguments)
{
    char line[512];
    format_string_va(line, sizeof(line), format, arguments);
    if (!take_lock) {
        console_write(line);
        return;
    }
    uint64_t flags = spin_lock(&kernel_shared->console.lock);
    console_write(line);
    spin_unlock(&kernel_shared->console.lock, flags);
}

/* True when another core has panicked: its report must not be interleaved. */
static int silenced(void)
{
    uint32_t panicking = atomic_load_acquire(&kernel_shared->panicking);
    if (panicking == 0)
        return 0;
    uint64_t gs_base = rdmsr(MSR_GS_BASE);
    uint32_t core =
        gs_base != 0 ? this_cpu_after_boot_test()->index : MKERNEL_CORE; /* early boot */
    return panicking != core + 1;
}

void kprintf(const char *format, ...)
{
    if (silenced())
        return;
    va_list arguments;
    va_start(arguments, format);
    console_print(1, format, arguments);
    va_end(arguments);
}

void kprintf_unlocked(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    console_print(0, format, arguments);
    va_end(arguments);
}
