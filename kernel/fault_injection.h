/* fault_injection.h: deliberate kernel faults for tests (command-line
 * option fault=pagefault|divide|ud|gp, on the core named by fault_core=K,
 * default 0). They prove a fault ends in a report and a failing exit.
 * ica_wait_delay and ica_paste_delay widen race windows for tests (see
 * below). */
#pragma once
#include "cpu.h"
#include "shared.h"
#include <stdint.h>

/* Faults now if the command line asks this core to. */
void fault_injection_check(void);

/* A delay that widens a race window for tests: the command-line option
 * `option`=CYCLES (default 0: none) is spun through on every core, so a
 * test can make a move on another core land inside that window every time
 * instead of rarely. `cycles` is per core, UINT64_MAX until read; the
 * common case, no delay, is decided inline. */
struct injected_delay {
    const char *option;
    uint64_t cycles[MAX_CORES];
};
void fault_injection_delay_slowly(struct injected_delay *delay);
static inline void fault_injection_delay(struct injected_delay *delay)
{
    if (__builtin_expect(delay->cycles[this_cpu()->index] != 0, 0))
        fault_injection_delay_slowly(delay);
}

/* ica_wait_delay=CYCLES: where an ICA wait has been announced but not yet
 * checked (a cross-core wake lands inside). */
extern struct injected_delay ica_wait_delay;
static inline void fault_injection_widen_ica_wait(void)
{
    fault_injection_delay(&ica_wait_delay);
}

/* ica_paste_delay=CYCLES: where a sender on another core has claimed a
 * receiver's poll or parked receive, checked it, and is about to write its
 * page tables (a kill of the receiver lands inside: ica_across.c). */
extern struct injected_delay ica_paste_delay;
static inline void fault_injection_widen_ica_paste(void)
{
    fault_injection_delay(&ica_paste_delay);
}
