/* user.h: typed wrappers of Formica's system calls for user programs (see
 * formica/syscalls.h for the ABI). Each returns what the kernel returns: a
 * value >= 0 on success, or a negative -E_* code (formica/errors.h). */
#pragma once
#include <formica/errors.h>
#include <formica/syscalls.h>
#include <stddef.h>
#include <stdint.h>

/* The raw system call, syscall6, is in formica/syscall_instruction.h. */

/* Processes. exit() flushes buffered console output first. */
__attribute__((noreturn)) void exit(int code);
long process_id(void);
long core_id(void);
long yield(void);
/* Starts `program` (a name in the boot image) with space-separated
 * `arguments` (may be NULL) on `core` (or CORE_ANY) at `priority`
 * (PRIORITY_SERVER or PRIORITY_APPLICATION); returns the new pid. */
long spawn(const char *program, const char *arguments, uint32_t core, uint32_t priority);
/* Blocks until child `pid` ends; stores its exit code when `exit_code` is set. */
long wait_process(long pid, int *exit_code);
long kill_process(long pid);
/* Blocks until any child ends; returns its pid (exit code in *exit_code when
 * set), or -E_NOT_FOUND when the caller has no child left to wait for. */
long wait_any(int *exit_code);
/* Makes process `pid` execute a faulting instruction (the administrator
 * only: -E_PERMISSION otherwise). */
long crash_process(long pid);
long process_list(struct process_info *processes, size_t max);
#define PROCESS_LIST_MAX 256 /* the kernel's process slots: a list this long sees them all */
long core_list(struct core_info *cores, size_t max);

/* Memory: grows the heap by `bytes` (whole pages); returns the old end. */
long memory_grow(size_t bytes);
/* A server holding RIGHT_RESERVED_NAME charges `bytes` it spends for client
 * `pid` to the client's quota account (negative: gives them back); the
 * client's charged bytes, or -E_QUOTA past its account's limit. */
long account_charge(long pid, int64_t bytes);
/* The machine's memory in bytes (SYS_MEMORY_REPORT): total, free, and what the
 * caller may plan on (free less the kernel's reserve, within its account's
 * quota); 0 or -E_FAULT. The shell's `free` prints it. */
long memory_report_get(struct memory_report *report);

/* Notifications: a per-process counter. notify adds one to `pid`'s count;
 * await_notification blocks until the caller's count is > 0, then takes it
 * all and returns how much it took. */
long notify(long pid);
long await_notification(void);
long sleep_ms(uint64_t milliseconds);

/* Console: bytes to and from the serial console. console_read blocks until
 * at least one byte is there. Prefer printf (stdio.h) for output. */
long console_write(const void *buffer, size_t length);
long console_read(void *buffer, size_t length);

/* The value of `name=value` on the kernel command line, NUL-terminated in
 * `buffer`; returns its length or -E_NOT_FOUND. */
long kernel_option(const char *name, char *buffer, size_t size);
long placement_get(struct placement_info *placement);
long clock_get(struct clock_info *clock);
/* Stops every core and exits QEMU with `status` (0 = success); returns
 * -E_PERMISSION to a process without RIGHT_POWER_OFF. */
long power_off(int status);

/* The time-stamp counter of the current core. */
static inline uint64_t read_timestamp_counter(void)
{
    uint32_t low, high;
    __asm__ volatile("rdtsc" : "=a"(low), "=d"(high));
    return (uint64_t)high << 32 | low;
}
/* The time-stamp counter's ticks per microsecond, once clock_microseconds
 * has asked the kernel (0 before). */
extern uint64_t clock_ticks_per_us;
/* clock_microseconds the first time: one system call for the rate. */
uint64_t clock_microseconds_first(void);
/* Microseconds since the machine started, from the time-stamp counter (one
 * system call the first time, none after); 0 if the rate is unknown.
 * Inline: servers stamp every request. */
static inline uint64_t clock_microseconds(void)
{
    if (clock_ticks_per_us == 0)
        return clock_microseconds_first();
    return read_timestamp_counter() / clock_ticks_per_us;
}
