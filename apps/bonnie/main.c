/* bonnie: seed 003's Bonnie (P processes referencing random chunks of one
 * file with readblock or readbyte, updating U % of them) and Tim Bray's
 * sequential tests. Usage and output: docs/bonnie.md. */
#include "bonnie.h"
#include <formica/user.h>

uint64_t bonnie_cycles_to_us(uint64_t cycles)
{
    struct clock_info clock;
    if (clock_get(&clock) != 0 || clock.tsc_hz == 0)
        return 0;
    return (uint64_t)((__uint128_t)cycles * 1000000u / clock.tsc_hz);
}

int main(int argc, char **argv)
{
    struct bonnie_options options;
    if (!bonnie_parse_options(argc, argv, &options))
        return 2;
    if (options.child)
        return bonnie_run_child(&options);
    if (options.sequential)
        return bonnie_run_sequential(&options);
    return bonnie_run_seeker(&options);
}
