/* system_calls.c: the typed system-call wrappers declared in formica/user.h.
 * Each is one syscall6 call; spawn also packs its request structure. exit
 * lives in stdlib.c because it flushes console output first. */
#include <formica/device.h>
#include <formica/user.h>
#include <string.h>

static long call0(long number)
{
    return syscall6(number, 0, 0, 0, 0, 0, 0);
}

static long call1(long number, long a)
{
    return syscall6(number, a, 0, 0, 0, 0, 0);
}

static long call2(long number, long a, long b)
{
    return syscall6(number, a, b, 0, 0, 0, 0);
}

static long call3(long number, long a, long b, long c)
{
    return syscall6(number, a, b, c, 0, 0, 0);
}

long process_id(void)
{
    return call0(SYS_PROCESS_ID);
}
long core_id(void)
{
    return call0(SYS_CORE_ID);
}
long yield(void)
{
    return call0(SYS_YIELD);
}
long await_notification(void)
{
    return call0(SYS_AWAIT);
}
long notify(long pid)
{
    return call1(SYS_NOTIFY, pid);
}
long kill_process(long pid)
{
    return call1(SYS_KILL, pid);
}
long wait_any(int *exit_code)
{
    return call1(SYS_WAIT_ANY, (long)exit_code);
}
long crash_process(long pid)
{
    return call1(SYS_CRASH, pid);
}
long account_charge(long pid, int64_t bytes)
{
    return call2(SYS_ACCOUNT_CHARGE, pid, (long)bytes);
}
long memory_report_get(struct memory_report *report)
{
    return call1(SYS_MEMORY_REPORT, (long)report);
}
long memory_grow(size_t bytes)
{
    return call1(SYS_MEMORY_GROW, (long)bytes);
}
long sleep_ms(uint64_t milliseconds)
{
    return call1(SYS_SLEEP, (long)milliseconds);
}
long placement_get(struct placement_info *placement)
{
    return call1(SYS_PLACEMENT, (long)placement);
}
long clock_get(struct clock_info *clock)
{
    return call1(SYS_CLOCK, (long)clock);
}

long wait_process(long pid, int *exit_code)
{
    return call2(SYS_WAIT, pid, (long)exit_code);
}

long process_list(struct process_info *processes, size_t max)
{
    return call2(SYS_PROCESS_LIST, (long)processes, (long)max);
}

long core_list(struct core_info *cores, size_t max)
{
    return call2(SYS_CORE_LIST, (long)cores, (long)max);
}

long console_write(const void *buffer, size_t length)
{
    return call2(SYS_CONSOLE_WRITE, (long)buffer, (long)length);
}

long console_read(void *buffer, size_t length)
{
    return call2(SYS_CONSOLE_READ, (long)buffer, (long)length);
}

long kernel_option(const char *name, char *buffer, size_t size)
{
    return call3(SYS_KERNEL_OPTION, (long)name, (long)buffer, (long)size);
}

long spawn(const char *program, const char *arguments, uint32_t core, uint32_t priority)
{
    return spawn_with_flags(program, arguments, core, priority, 0);
}

long power_off(int status)
{
    return call1(SYS_POWER_OFF, status); /* returns only when refused (RIGHT_POWER_OFF) */
}
