/* syscall.h: system-call set-up and dispatch (the ABI is in
 * lib/include/formica/syscalls.h). Calls that need the m-kernel (spawn,
 * memory) are forwarded to it; the rest are served on the caller's core. */
#pragma once
#include "trap.h"
#include <stdbool.h>

/* Enables `syscall` on the calling core (EFER.SCE, STAR, LSTAR, SFMASK). */
void syscall_install(void);
/* syscall_entry.S's two ways: a call the ICA fast path serves (the bit of
 * its number set in ica_fast_path_calls) goes to ica_fast_path first, then
 * syscall_finish when that answered it; the others, and what the fast path
 * left, go to syscall_dispatch (the handler, then syscall_finish). */
extern const uint64_t ica_fast_path_calls;
void syscall_dispatch(struct trap_frame *frame);
/* A user-mode fault at syscall_entry itself is a `syscall` that loaded RIP,
 * RCX, R11 and RFLAGS but left the CPU at privilege 3: a hypervisor that
 * runs user mode natively and emulates the kernel (Linux's kvm_pvm) does
 * that. The frame then holds the call: it is served here (true) and returns
 * by iretq. Any other fault: false. A program that jumps there on purpose
 * gets what a `syscall` would give it, with the flags a user may set. */
bool syscall_entry_fault(struct trap_frame *frame);
/* After every call: a pending hand-off made ready, a killed caller ended. */
void syscall_finish(void);
