/* console_setup.c: the boot core prepares the console every core prints
 * to: COM1 at 115200 baud 8N1 with its FIFO when the machine has a serial
 * port, the VGA text screen or the framebuffer the loader set up, and the
 * record the keyboards' input goes through (kernel/console_input.h). */
#include "console_setup.h"
#include "console.h"
#include "console_input.h"
#include "layout.h"
#include "page_attributes.h"
#include "paging.h"
#include "shared.h"
#include "x86.h"
#include <format.h>

#define COM1_SCRATCH (COM1 + 7)
#define FOUR_GIB (4ull << 30)
#define VGA_TEXT_PHYSICAL 0xb8000

/* The input record: its own symbol, so build/run finds it in mkernel.elf. */
struct console_input console_input_record;
/* The framebuffer console's cells: static, so the screen works from the first line. */
static struct console_cell framebuffer_cells[FRAMEBUFFER_MAX_CELLS];
static struct console_cell framebuffer_shown[FRAMEBUFFER_MAX_CELLS];
static const char *framebuffer_mapping = "boot page tables";

/* A 16550's scratch register keeps what is written; without a UART the
 * port floats (reads 0xff), so two patterns tell them apart. */
static bool serial_port_answers(void)
{
    static const uint8_t patterns[] = {0x5a, 0xa5};
    for (unsigned i = 0; i < sizeof(patterns); i++) {
        port_out8(COM1_SCRATCH, patterns[i]);
        if (port_in8(COM1_SCRATCH) != patterns[i])
            return false;
    }
    return true;
}

void console_init_serial(void)
{
    struct console_state *console = &kernel_shared->console;
    console->input = &console_input_record;
    console_input_record.magic = CONSOLE_INPUT_MAGIC;
    console->serial = serial_port_answers();
    if (!console->serial)
        return;
    port_out8(COM1 + 1, 0x00); /* no interrupts */
    port_out8(COM1 + 3, 0x80); /* divisor latch */
    port_out8(COM1 + 0, 0x01); /* 115200 baud */
    port_out8(COM1 + 1, 0x00);
    port_out8(COM1 + 3, 0x03); /* 8N1 */
    port_out8(COM1 + 2, 0xc7); /* FIFO on */
    port_out8(COM1 + 4, 0x03);
}

static void enable_vga(uint16_t *text_buffer)
{
    struct console_state *console = &kernel_shared->console;
    console->vga = text_buffer;
    console->vga_row = 0;
    console->vga_column = 0;
    console->vga_top = 0;
    for (int i = 0; i < VGA_COLUMNS * VGA_ROWS; i++)
        text_buffer[i] = VGA_ATTRIBUTE | ' ';
    console_vga_show_from(0); /* the firmware may have left the window elsewhere */
}

static uint64_t framebuffer_bytes(const struct framebuffer_format *format)
{
    return (uint64_t)format->pitch * format->height;
}

/* The framebuffer when the loader gave a direct-RGB one this code draws. */
static const struct framebuffer_format *drawable_framebuffer(const struct boot_information *boot)
{
    const char *reason = "";
    if (!boot->framebuffer)
        return NULL;
    if (boot->framebuffer_type != 1)
        reason = "indexed colour is not drawn";
    else if (framebuffer_bytes(&boot->framebuffer_format) > FRAMEBUFFER_WINDOW_BYTES)
        reason = "larger than the kernel's 1 GiB window for it";
    else if (framebuffer_format_usable(&boot->framebuffer_format, &reason))
        return &boot->framebuffer_format;
    kprintf("console: the loader's framebuffer (%ux%u, %u bits, type %u) is not used: %s\n",
            boot->framebuffer_format.width, boot->framebuffer_format.height,
            boot->framebuffer_format.bits_per_pixel, boot->framebuffer_type, reason);
    return NULL;
}

static void start_framebuffer(const struct framebuffer_format *format, volatile uint8_t *pixels)
{
    struct console_state *console = &kernel_shared->console;
    uint64_t flags = spin_lock(&console->lock);
    framebuffer_console_start(&console->framebuffer, pixels, format, framebuffer_cells,
                              framebuffer_shown);
    spin_unlock(&console->lock, flags);
}

void console_init_screen(const struct boot_information *boot)
{
    if (boot->vga_text) {
        enable_vga(phys_to_virt(VGA_TEXT_PHYSICAL));
        return;
    }
    const struct framebuffer_format *format = drawable_framebuffer(boot);
    if (format != NULL && format->physical + framebuffer_bytes(format) <= FOUR_GIB)
        start_framebuffer(format, phys_to_virt(format->physical));
}

void console_map_framebuffer(const struct boot_information *boot)
{
    const struct framebuffer_format *format = drawable_framebuffer(boot);
    if (format == NULL)
        return;
    kernel_shared->write_combining = page_attributes_offered();
    page_attributes_program();
    uint64_t attributes = kernel_shared->write_combining ? PAGE_WRITE_COMBINING
                                                         : PAGE_CACHE_DISABLE | PAGE_WRITE_THROUGH;
    uint64_t first = format->physical & ~(uint64_t)(PAGE_SIZE - 1);
    uint64_t end = format->physical + framebuffer_bytes(format);
    for (uint64_t physical = first; physical < end; physical += PAGE_SIZE) {
        uint64_t flags = PAGE_PRESENT | PAGE_WRITABLE | PAGE_GLOBAL | PAGE_DEVICE | attributes;
        if (paging_map_kernel_page(FRAMEBUFFER_VIRTUAL_BASE + (physical - first), physical,
                                   flags) != 0) {
            kprintf("console: no memory to map the framebuffer; it stays as it was\n");
            return;
        }
    }
    volatile uint8_t *pixels =
        (volatile uint8_t *)(FRAMEBUFFER_VIRTUAL_BASE + (format->physical - first));
    struct console_state *console = &kernel_shared->console;
    framebuffer_mapping = kernel_shared->write_combining ? "write-combining" : "uncached";
    if (console->framebuffer.pixels == NULL) {
        start_framebuffer(format, pixels); /* above 4 GiB: drawn from here on */
        return;
    }
    uint64_t flags = spin_lock(&console->lock);
    framebuffer_console_remap(&console->framebuffer, pixels);
    spin_unlock(&console->lock, flags);
}

void console_report(void)
{
    const struct console_state *console = &kernel_shared->console;
    const struct framebuffer_console *screen = &console->framebuffer;
    bool framebuffer = screen->pixels != NULL, vga = console->vga != NULL;
    char described[160] = "none";
    if (framebuffer)
        format_string(described, sizeof(described), "%ux%u %u bpp at 0x%lx (%s), %ux%u characters",
                      screen->format.width, screen->format.height, screen->format.bits_per_pixel,
                      screen->format.physical, framebuffer_mapping, screen->columns, screen->rows);
    kprintf("console: serial %s, VGA text %s, framebuffer %s\n", console->serial ? "COM1" : "none",
            vga ? "80x25" : "none", described);
    uint32_t columns = framebuffer ? screen->columns : vga ? VGA_COLUMNS : 0;
    uint32_t rows = framebuffer ? screen->rows : vga ? VGA_ROWS : 0;
    kprintf("@json {\"kind\":\"console\",\"serial\":%s,\"vga_text\":%s,\"framebuffer\":%s,"
            "\"width\":%u,\"height\":%u,\"columns\":%u,\"rows\":%u}\n",
            console->serial ? "true" : "false", vga ? "true" : "false",
            framebuffer ? "true" : "false", framebuffer ? screen->format.width : 0,
            framebuffer ? screen->format.height : 0, columns, rows);
}
