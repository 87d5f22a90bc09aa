/* fault_injection.c: performs the fault the command line asks for. Each case
 * is a real faulting instruction, not a call to panic(). Also the delay that
 * widens the ICA wait's race window for tests. */
#include "fault_injection.h"
#include "console.h"
#include "cpu.h"
#include "shared.h"
#include "x86.h"
#include <string.h>

static unsigned parse_core(const char *text)
{
    unsigned value = 0;
    while (*text >= '0' && *text <= '9')
        value = value * 10 + (unsigned)(*text++ - '0');
    return value;
}

void fault_injection_check(void)
{
    char name[32], core[16];
    if (!command_line_option("fault", name, sizeof(name)))
        return;
    unsigned target = command_line_option("fault_core", core, sizeof(core)) ? parse_core(core) : 0;
    if (target != this_cpu()->index)
        return;
    kprintf("core %u: injecting fault '%s'\n", target, name);
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
        kprintf("core %u: unknown fault '%s' ignored\n", target, name);
}

#define DELAY_UNREAD UINT64_MAX

static uint64_t ica_wait_delay[MAX_CORES] = {[0 ... MAX_CORES - 1] = DELAY_UNREAD};

static uint64_t parse_cycles(const char *text)
{
    uint64_t value = 0;
    while (*text >= '0' && *text <= '9')
        value = value * 10 + (uint64_t)(*text++ - '0');
    return value;
}

void fault_injection_widen_ica_wait(void)
{
    uint64_t *delay = &ica_wait_delay[this_cpu()->index];
    if (*delay == DELAY_UNREAD) {
        char text[24];
        *delay = command_line_option("ica_wait_delay", text, sizeof(text)) ? parse_cycles(text) : 0;
    }
    if (*delay == 0)
        return;
    uint64_t start = rdtsc();
    while (rdtsc() - start < *delay)
        cpu_relax();
}
