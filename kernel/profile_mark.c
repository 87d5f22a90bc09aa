/* profile_mark.c: the kernel's half of the instruction profiler
 * (docs/profiling.md). QEMU 7.2's plugin API can read neither registers
 * nor memory, so each switch calls the pid's one-byte pad in profile_pads:
 * the plugin learns the pid from the address of the block that runs. */
#include "profile_mark.h"
#include "console.h"
#include "shared.h"
#include <stddef.h>

extern const uint8_t profile_pads[PROFILE_MARK_SLOTS];

void profile_mark_call_pad(uint32_t pid)
{
    void (*pad)(void) = (void (*)(void))(uintptr_t)&profile_pads[pid % PROFILE_MARK_SLOTS];
    pad();
}

void profile_note_program(uint32_t pid, uint32_t core, const char *program)
{
    if (kernel_shared->profile_marks)
        kprintf("@json {\"kind\":\"profile_process\",\"pid\":%u,\"core\":%u,\"program\":\"%s\"}\n",
                pid, core, program);
}
