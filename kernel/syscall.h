/* syscall.h: system-call set-up and dispatch (the ABI is in
 * lib/include/formica/syscalls.h). Calls that need the m-kernel (spawn,
 * memory) are forwarded to it; the rest are served on the caller's core. */
#pragma once
#include "trap.h"

/* Enables `syscall` on the calling core (EFER.SCE, STAR, LSTAR, SFMASK). */
void syscall_install(void);
void syscall_dispatch(struct trap_frame *frame);
