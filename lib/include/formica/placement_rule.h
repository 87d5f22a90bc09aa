/* placement_rule.h: which core application process `index` of `total` runs
 * on under a placement (struct placement_info of syscalls.h). User space
 * (the shell, Bonnie) and the host unit test link lib/placement_rule.c. */
#pragma once
#include <stdint.h>
#include <formica/syscalls.h>

/* Core for application process `index` (0-based) of `total` processes.
 * Spread placements use only the app_preferred_count cores without a server
 * while total <= app_preferred_count, else all app_core_count cores; either
 * way round-robin, so the processes are spread evenly. An empty list gives 0. */
uint32_t placement_app_core(const struct placement_info *placement, uint32_t index, uint32_t total);
