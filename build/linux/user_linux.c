/* build/linux/user_linux.c: the process calls apps/sort and apps/memseq make besides
 * Teramem, on Linux (build/linux/build.sh): the TSC is read with rdtsc as on Formica (a
 * clock_gettime in every progress check costs a system call where the guest's clocksource
 * is not the TSC), its rate measured at start against CLOCK_MONOTONIC; the console is stdout,
 * flushed; sleep_ms is nanosleep. */
#define _GNU_SOURCE
#include <formica/user.h>
#include <stdio.h>
#include <time.h>

uint64_t read_timestamp_counter(void)
{
    uint32_t low, high;
    __asm__ volatile("rdtsc" : "=a"(low), "=d"(high));
    return (uint64_t)high << 32 | low;
}

static uint64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The TSC's rate against CLOCK_MONOTONIC over 50 ms, measured once. */
static uint64_t tsc_hz(void)
{
    static uint64_t measured;
    if (measured == 0) {
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 50000000};
        uint64_t ns_before = monotonic_ns(), ticks_before = read_timestamp_counter();
        nanosleep(&pause, NULL);
        uint64_t ns = monotonic_ns() - ns_before, ticks = read_timestamp_counter() - ticks_before;
        measured = ns == 0 ? 1000000000u : (uint64_t)((double)ticks * 1e9 / (double)ns);
    }
    return measured;
}

/* Measured before main, so the 50 ms never fall inside what a program times. */
__attribute__((constructor)) static void measure_tsc_at_start(void)
{
    tsc_hz();
}

long clock_get(struct clock_info *clock)
{
    clock->tsc_hz = tsc_hz();
    clock->ticks = 0;
    clock->tick_period_us = 0;
    return 0;
}

void fflush_console(void)
{
    fflush(stdout);
}

long sleep_ms(uint64_t milliseconds)
{
    struct timespec pause = {.tv_sec = (time_t)(milliseconds / 1000),
                             .tv_nsec = (long)(milliseconds % 1000) * 1000000};
    return nanosleep(&pause, NULL) == 0 ? 0 : -E_INVALID;
}
