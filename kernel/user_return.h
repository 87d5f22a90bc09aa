/* user_return.h: the one rule for every way back to user mode (sysret in
 * syscall_entry.S, iretq in trap_entry.S): a return address at or above
 * USER_SPACE_END ends the process, before either instruction runs
 * (docs/processes.md, "Returning to user mode"). */
#pragma once
#include "layout.h"
#include "trap.h"
#include <stdbool.h>
#include <stdint.h>

/* Whether the kernel may return to user mode at `address`: below
 * USER_SPACE_END, so canonical and in user space. */
static inline bool user_return_allowed(uint64_t address)
{
    return address < USER_SPACE_END;
}

/* Ends the current process, whose frame returns to a refused address, with
 * a report and exit code PROCESS_EXIT_FAULT_BASE + 13 (the general
 * protection fault a CPU raises for a non-canonical return address). Called
 * by the return paths' assembly on the process's kernel stack; never
 * returns. */
__attribute__((noreturn)) void user_return_refused(struct trap_frame *frame);
