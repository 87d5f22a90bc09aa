/* build/linux/include/formica/user.h: the Linux stand-in for Formica's
 * process calls Bonnie uses. spawn forks and runs the child part of Bonnie in
 * the new process; notifications are bytes on pipes; the "TSC" is
 * CLOCK_MONOTONIC in nanoseconds (so Bonnie's `cycles` field is nanoseconds,
 * and under QEMU -icount shift=0 it counts guest instructions). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <formica/errors.h>
#include <formica/file.h>

#define PRIORITY_APPLICATION 1
#define ARGUMENTS_BYTES 256

struct clock_info {
    uint64_t tsc_hz;
    uint64_t ticks;
    uint64_t tick_period_us;
};

struct placement_info {
    char name[16];
};

/* Linux has no Formica servers: process_list reports none. */
enum process_state { PROCESS_ZOMBIE = 4 };

struct process_info {
    uint32_t pid;
    uint32_t state; /* enum process_state */
    char name[32];
    uint64_t cpu_cycles;
};

long process_id(void);
long core_id(void);
long spawn(const char *program, const char *arguments, uint32_t core, uint32_t priority);
long wait_process(long pid, int *exit_code);
long notify(long pid);
long await_notification(void);
uint64_t read_timestamp_counter(void);
long clock_get(struct clock_info *clock);
long placement_get(struct placement_info *placement);
long process_list(struct process_info *processes, size_t max);

/* For sort and memseq (build/linux/teramem_linux.c): console output is stdout,
 * flushed; sleep_ms is nanosleep. */
void fflush_console(void);
long sleep_ms(uint64_t milliseconds);

/* For flashbench and libflmalloc (build/linux/flashbench_linux.c, flmalloc_linux.c):
 * microseconds of CLOCK_MONOTONIC; the memory report from sysinfo (available is
 * MemAvailable). */
uint64_t clock_microseconds(void);
struct memory_report {
    uint64_t total;
    uint64_t free;
    uint64_t available;
};
long memory_report_get(struct memory_report *report);
/* build/linux/teramem_linux.c: memory.max of the process's own cgroup = what it uses now +
 * limit_bytes (as teramem_init's -l); false, after a message, when it cannot be set. */
bool linux_cgroup_limit(uint64_t limit_bytes);
