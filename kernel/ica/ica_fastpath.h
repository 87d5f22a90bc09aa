/* ica_fastpath.h: the common case of an ICA handover in one pass (seL4's
 * IPC fastpath, L4's direct switch): a control ICA to a process of this
 * core parked where it can take it, resumed straight in user mode. */
#pragma once
#include <stdbool.h>
#include <formica/syscalls.h>
#include <stdint.h>

struct trap_frame;

/* The system calls the fast path serves (formica/syscalls.h numbers), as a
 * mask: syscall_entry.S tries it first for these (ica_fast_path_calls). */
#define ICA_FAST_PATH_CALLS                                                                        \
    ((1ull << SYS_ICA_REQUEST) | (1ull << SYS_ICA_FORWARD_RECEIVE) |                               \
     (1ull << SYS_ICA_RETURN_RECEIVE))

/* A synchronous ica_request, ica_forward_receive or ica_return_receive
 * handed over in one pass when its receiver is parked on this core. False
 * when the fast path does not apply (nothing changed: the general call
 * runs, and reports any error). True when it was handed over and the
 * caller parked: either the caller was resumed straight in user mode (this
 * does not return then) or it was woken the ordinary way, went on as the
 * general call would (collect its result / receive) and frame->rax holds
 * the call's result. */
bool ica_fast_path(struct trap_frame *frame);
