/* placement_rule.c: the application-placement rule of syscalls.h, in one
 * self-contained function that every program starting application
 * processes links (see docs/placement.md, "The spread rule"). The kernels
 * do not link it: they only parse the placement and hand it out. */
#include <formica/placement_rule.h>

static uint32_t usable_count(uint32_t count)
{
    return count > PLACEMENT_MAX_APP_CORES ? PLACEMENT_MAX_APP_CORES : count;
}

uint32_t placement_app_core(const struct placement_info *placement, uint32_t index, uint32_t total)
{
    uint32_t all = usable_count(placement->app_core_count);
    uint32_t preferred = usable_count(placement->app_preferred_count);
    if (all == 0)
        return 0;
    if (preferred > all)
        preferred = all;
    uint32_t pool = all;
    if (placement->app_spread && preferred > 0 && total <= preferred)
        pool = preferred;
    return placement->app_cores[index % pool];
}
