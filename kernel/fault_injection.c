/* fault_injection.c: performs the fault the command line asks for. Each case
 * is a real faulting instruction, not a call to panic(). Also the delays
 * that widen race windows for tests. */
#include "fault_injection.h"
#include "console.h"
#include "cpu.h"
#include "shared.h"
#include "x86.h"
#include <string.h>

void fault_injection_check(void)
{
    char name[32];
    if (!command_line_option("fault", name, sizeof(name)))
        return;
    uint64_t target = command_line_number("fault_core", 0);
    if (target != this_cpu()->index)
        return;
    kprintf("core %lu: injecting fault '%s'\n", target, name);
    if (strcmp(name, "pagefault") == 0) {
        uint64_t *volatile unmapped = (uint64_t *)0x10;
        *unmapped = 1;
    } else if (strcmp(name, "divide") == 0)
        __asm__ volatile("xorl %%ecx, %%ecx; movl $1, %%eax; xorl %%edx, %%edx; divl %%ecx"
                         :
                         :
                         : "rax", "rcx", "rdx");
    else if (strcmp(name, "ud") == 0)
        __asm__ volatile("ud2");
    else if (strcmp(name, "gp") == 0)
        __asm__ volatile("movq %0, %%rax; movq (%%rax), %%rax"
                         :
                         : "r"(0x8000000000000000ull)
                         : "rax");
    else
        kprintf("core %lu: unknown fault '%s' ignored\n", target, name);
}

#define DELAY_UNREAD UINT64_MAX

struct injected_delay ica_wait_delay = {"ica_wait_delay", {[0 ... MAX_CORES - 1] = DELAY_UNREAD}};
struct injected_delay ica_paste_delay = {"ica_paste_delay", {[0 ... MAX_CORES - 1] = DELAY_UNREAD}};

void fault_injection_delay_slowly(struct injected_delay *delay)
{
    uint64_t *cycles = &delay->cycles[this_cpu()->index];
    if (*cycles == DELAY_UNREAD)
        *cycles = command_line_number(delay->option, 0);
    if (*cycles == 0)
        return;
    uint64_t start = rdtsc();
    while (rdtsc() - start < *cycles)
        cpu_relax();
}
