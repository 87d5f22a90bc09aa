/* clock_microseconds.c: microseconds since the machine started, from the
 * time-stamp counter: one SYS_CLOCK for its rate, then no system call at
 * all (the cores' counters run together). For servers that stamp times on
 * every request. */
#include <formica/user.h>

uint64_t clock_microseconds(void)
{
    static uint64_t ticks_per_us;
    if (ticks_per_us == 0) {
        struct clock_info clock;
        if (clock_get(&clock) != 0 || clock.tsc_hz < 1000000)
            return 0;
        ticks_per_us = clock.tsc_hz / 1000000;
    }
    return read_timestamp_counter() / ticks_per_us;
}
