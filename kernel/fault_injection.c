/* fault_injection.c: performs the fault the command line asks for. Each case
 * is a real faulting instruction, not a call to panic(). */
#include "fault_injection.h"
#include "console.h"
#include "cpu.h"
#include "shared.h"
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
