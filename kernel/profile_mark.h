/* profile_mark.h: tells build/profile's QEMU plugin which process a core
 * runs (a call into profile_pads at the pid's offset, a block the plugin
 * recognises by its address), and which program each pid runs. */
#pragma once
#include "shared.h"
#include <stdint.h>

#define PROFILE_MARK_SLOTS 4096u /* pids are told apart modulo this (profile_pads.S) */

/* Calls the pid's pad. */
void profile_mark_call_pad(uint32_t pid);
/* Called on every switch into a process (its pid) and back (0); a load and
 * a test unless the kernel runs under the profiler. */
static inline void profile_mark_running(uint32_t pid)
{
    if (kernel_shared->profile_marks)
        profile_mark_call_pad(pid);
}
/* With the command-line option `profile`: one @json profile_process line. */
void profile_note_program(uint32_t pid, uint32_t core, const char *program);
