/* panic.c: fatal errors and the end of a run. A panicking core marks the
 * shared state so other cores stop printing, reports itself and leaves
 * through isa-debug-exit, or halts where there is no such device. */
#include "panic.h"
#include "console.h"
#include "shared.h"
#include "x86.h"
#include <format.h>
#include <stdarg.h>

#define DEBUG_EXIT_PORT 0xf4
/* QEMU exits with (value << 1) | 1: 0x10 gives 33 (success), 0x11 gives 35
 * (failure), both distinct from QEMU's own error status 1. */
#define DEBUG_EXIT_BASE 0x10

void (*machine_power_off_hook)(void);

void halt_forever(void)
{
    for (;;)
        __asm__ volatile("cli; hlt");
}

void machine_exit(uint32_t status)
{
    port_out32(DEBUG_EXIT_PORT, DEBUG_EXIT_BASE | (status != 0));
    if (status == 0 && machine_power_off_hook != 0)
        machine_power_off_hook();
    halt_forever();
}

static uint32_t current_core(void)
{
    uint64_t gs_base = rdmsr(MSR_GS_BASE);
    return gs_base != 0 ? this_cpu()->index : 0;
}

void panic(const char *format, ...)
{
    interrupts_disable();
    char message[256];
    va_list arguments;
    va_start(arguments, format);
    format_string_va(message, sizeof(message), format, arguments);
    va_end(arguments);
    __atomic_store_n(&kernel_shared->panicking, current_core() + 1, __ATOMIC_RELEASE);
    kprintf_unlocked("\nPANIC on core %u: %s\n", current_core(), message);
    machine_exit(1);
}
