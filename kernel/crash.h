/* crash.h: turning a pending SYS_CRASH into a real fault (crash.c). */
#pragma once
#include "process.h"

/* Called where `process` (the current one) is about to exit with `code`:
 * when a crash was requested and the exit is the kill that delivered it,
 * resumes the process in user mode at an unmapped address instead, so it
 * faults there. Returns otherwise. */
void crash_if_requested(struct process *process, int32_t code);
