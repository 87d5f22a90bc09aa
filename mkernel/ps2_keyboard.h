/* ps2_keyboard.h: the PS/2 keyboard of the kernel's console (i8042, IRQ 1). */
#pragma once

/* Finds and sets up the i8042, routes IRQ 1 to this core (the m-kernel's),
 * and says what it found; from then on its keys reach SYS_CONSOLE_READ. */
void ps2_keyboard_start(void);
