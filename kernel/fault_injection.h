/* fault_injection.h: deliberate kernel faults for tests (command-line
 * option fault=pagefault|divide|ud|gp, on the core named by fault_core=K,
 * default 0). They prove a fault ends in a report and a failing exit.
 * ica_wait_delay and ica_paste_delay widen race windows for tests (see
 * below). */
#pragma once
#include "cpu.h"
#include "shared.h"
#include "x86.h"
#include <stdint.h>

/* Faults now if the command line asks this core to; first reads the
 * delays' options below for this core (each core calls it at boot). */
void fault_injection_check(void);

/* A delay that widens a race window for tests: the command-line option
 * `option`=CYCLES (default 0: none) is spun through on every core, so a
 * test can make a move on another core land inside that window every time
 * instead of rarely. Inline, without a call or a memory clobber: the
 * common case, no delay, is one compare with memory and a branch on the
 * hot paths it sits in, and the caller keeps what it has in registers. */
struct injected_delay {
    const char *option;
    uint64_t cycles; /* read by each core at its boot (the same value) */
};
static inline void fault_injection_delay(const struct injected_delay *delay)
{
    uint64_t cycles = __atomic_load_n(&delay->cycles, __ATOMIC_RELAXED);
    if (__builtin_expect(cycles == 0, 1))
        return;
    uint64_t start = rdtsc();
    while (rdtsc() - start < cycles)
        __asm__ volatile("pause"); /* cpu_relax without its memory clobber: the
                                      caller's loads stay where they are */
}

/* ica_wait_delay=CYCLES: where an ICA wait has been announced but not yet
 * checked (a cross-core wake lands inside). */
extern struct injected_delay ica_wait_delay;
static inline void fault_injection_widen_ica_wait(void)
{
    fault_injection_delay(&ica_wait_delay);
}

/* ica_paste_delay=CYCLES: where a sender on another core has claimed a
 * server parked in its receive, checked it, and is about to write its page
 * tables (a kill of the server lands inside: ica_across.c). Only there: a
 * server polling, or a requester polling for its result, cannot end before
 * its poll's end, which waits out the claim anyway, and the check costs an
 * instruction or two on the paths it sits in. */
extern struct injected_delay ica_paste_delay;
static inline void fault_injection_widen_ica_paste(void)
{
    fault_injection_delay(&ica_paste_delay);
}
