/* port_io_emulation.h: in/out of a driver process that faulted, done by the
 * kernel (port_io_emulation.c says when that happens). */
#pragma once
#include "trap.h"
#include <stdbool.h>

/* A general-protection fault of a driver process on an in/out instruction:
 * makes the access, steps the frame past the instruction and returns true.
 * Any other fault, or a process that is not a driver: false. */
bool port_io_emulate(struct trap_frame *frame);
