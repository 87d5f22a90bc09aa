/* fault_injection.c: performs the fault the command line asks for. Each case
 * is a real faulting instruction, not a call to panic(). Also the delays
 * that widen race windows for tests. */
#include "fault_injection.h"
#include "console.h"
#include "cpu.h"
#include "shared.h"
#include "x86.h"
#include <string.h>

struct injected_delay ica_wait_delay = {"ica_wait_delay", 0};
struct injected_delay ica_paste_delay = {"ica_paste_delay", 0};

static void read_delay(struct injected_delay *delay)
{
    __atomic_store_n(&delay->cycles, command_line_number(delay->option, 0), __ATOMIC_RELAXED);
}

void fault_injection_check(void)
{
    read_delay(&ica_wait_delay);
    read_delay(&ica_paste_delay);
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
