/* trap_handlers.c: the table of interrupt handlers by vector, filled at boot
 * by the drivers of those vectors (timer, inter-core IPI, devices) and read by
 * trap_dispatch; a leaf, so registering a handler calls nothing above it. */
#include "trap.h"

trap_handler trap_handlers[TRAP_VECTORS];

void trap_set_handler(uint8_t vector, trap_handler handler)
{
    trap_handlers[vector] = handler;
}
