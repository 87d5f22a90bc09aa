/* console_setup.h: the boot core's one-off set-up of the shared console
 * (kernel/console.h): the serial port if the machine has one, the VGA text
 * screen or the loader's framebuffer, and the keyboards' input record. */
#pragma once
#include <stdint.h>
#include "boot_information.h"

/* Programs COM1 (115200 8N1, FIFO) when it answers; without it nothing is sent there. */
void console_init_serial(void);
/* The screen the loader left: VGA text, or the framebuffer while it lies in
 * the boot page tables' first 4 GiB (else from console_map_framebuffer on). */
void console_init_screen(const struct boot_information *boot);
/* After paging_init: maps the framebuffer write-combining (uncached without a
 * PAT) in the kernel half and draws through that mapping from then on. */
void console_map_framebuffer(const struct boot_information *boot);
/* Says which consoles were found: a line and @json {"kind":"console",...}. */
void console_report(void);
