/* console_setup.h: the boot core's one-off set-up of the shared console
 * (kernel/console.h): the serial port, then the VGA text screen if any. */
#pragma once
#include <stdint.h>

void console_init_serial(void);
/* Clears `text_buffer` (80×25 cells) and mirrors every line to it. */
void console_enable_vga(uint16_t *text_buffer);
