/* clock_microseconds.c: microseconds since the machine started, from the
 * time-stamp counter: one SYS_CLOCK for its rate, then no system call at
 * all (the cores' counters run together; the rest is inline in
 * formica/user.h). For servers that stamp times on every request. */
#include <formica/user.h>

uint64_t clock_ticks_per_us;

uint64_t clock_microseconds_first(void)
{
    struct clock_info clock;
    if (clock_get(&clock) != 0 || clock.tsc_hz < 1000000)
        return 0;
    clock_ticks_per_us = clock.tsc_hz / 1000000;
    return read_timestamp_counter() / clock_ticks_per_us;
}
