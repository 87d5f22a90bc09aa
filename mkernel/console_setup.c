/* console_setup.c: the boot core prepares the console every core prints
 * to: COM1 at 115200 baud 8N1 with its FIFO, and the VGA text screen when
 * the firmware left one. */
#include "console_setup.h"
#include "console.h"
#include "shared.h"
#include "x86.h"

void console_init_serial(void)
{
    port_out8(COM1 + 1, 0x00); /* no interrupts */
    port_out8(COM1 + 3, 0x80); /* divisor latch */
    port_out8(COM1 + 0, 0x01); /* 115200 baud */
    port_out8(COM1 + 1, 0x00);
    port_out8(COM1 + 3, 0x03); /* 8N1 */
    port_out8(COM1 + 2, 0xc7); /* FIFO on */
    port_out8(COM1 + 4, 0x03);
}

void console_enable_vga(uint16_t *text_buffer)
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
