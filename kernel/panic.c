/* panic.c: fatal errors and the end of a run. A panicking core marks the
 * shared state so other cores stop printing, reports itself and leaves
 * through isa-debug-exit, or halts where there is no such device. */
#include "panic.h"
#include "atomic.h"
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
    return gs_base != 0 ? this_cpu_after_boot_test()->index
                        : MKERNEL_CORE; /* no GS yet: early boot */
}

#define CONSOLE_WAIT_SPINS 10000000ull

void panic_begin(void)
{
    interrupts_disable();
    uint32_t me = current_core() + 1, none = 0;
    if (!atomic_compare_swap(&kernel_shared->panicking, &none, me)) {
        if (none == me)
            return;     /* begun already (a fault report before its panic) */
        halt_forever(); /* another core is already reporting its panic */
    }
    /* Let a line another core is printing finish; then the console is ours
     * (others stop printing once `panicking` is set). Bounded: a core that
     * died holding the lock cannot silence the report. */
    for (uint64_t spin = 0; spin < CONSOLE_WAIT_SPINS; spin++) {
        if (atomic_swap_acquire(&kernel_shared->console.lock.locked, 1) == 0)
            return;
        cpu_relax();
    }
}

void panic(const char *format, ...)
{
    panic_begin();
    char message[256];
    va_list arguments;
    va_start(arguments, format);
    format_string_va(message, sizeof(message), format, arguments);
    va_end(arguments);
    kprintf_unlocked("\nPANIC on core %u: %s\n", current_core(), message);
    machine_exit(1);
}
