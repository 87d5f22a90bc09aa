/* fault_injection.h: deliberate kernel faults for tests (command-line
 * option fault=pagefault|divide|ud|gp, on the core named by fault_core=K,
 * default 0). They prove a fault ends in a report and a failing exit. */
#pragma once

/* Faults now if the command line asks this core to. */
void fault_injection_check(void);
