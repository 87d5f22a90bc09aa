/* fault_injection.h: deliberate kernel faults for tests (command-line
 * option fault=pagefault|divide|ud|gp, on the core named by fault_core=K,
 * default 0). They prove a fault ends in a report and a failing exit.
 * ica_wait_delay=CYCLES widens a race window for tests (see below). */
#pragma once
#include "cpu.h"
#include <stdint.h>

/* Faults now if the command line asks this core to. */
void fault_injection_check(void);

/* Spins for ica_wait_delay=CYCLES (default 0: returns at once) where an ICA
 * wait has been announced but not yet checked, so a test can make a
 * cross-core wake land inside that window every time instead of rarely.
 * The common case, no delay, is decided inline. */
extern uint64_t ica_wait_delay[]; /* per core; UINT64_MAX until read */
void fault_injection_widen_ica_wait_slowly(void);
static inline void fault_injection_widen_ica_wait(void)
{
    if (__builtin_expect(ica_wait_delay[this_cpu()->index] != 0, 0))
        fault_injection_widen_ica_wait_slowly();
}
