/* ica_fastpath.h: the common case of an ICA handover in one pass (seL4's
 * IPC fastpath, L4's direct switch): a control ICA to a process of this
 * core parked where it can take it, resumed straight in user mode. */
#pragma once
#include <stdbool.h>
#include <formica/syscalls.h>
#include <stdint.h>

/* Where a process blocked for an ICA is parked (struct process.parked). */
enum ica_parked {
    PARKED_NOWHERE = 0,
    PARKED_IN_RECEIVE, /* a server in ica_receive (or a combined call's receive) */
    PARKED_IN_CALL,    /* a requester in a synchronous ica_request, for parked_for */
};

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

/* A synchronous requester whose poll for its result `id` ended because a
 * sender on another core woke a server of this core parked in its receive
 * (ica_poll.c hands it the core): the requester's kernel takes the
 * server's one noted request, pastes it, parks the requester for `id` and
 * switches to the server, whose receive returns the request at once. It
 * returns when the requester is woken the ordinary way (or when none of
 * this applies): the caller then collects its result as usual. */
void ica_fast_resume_handed_off(uint64_t id);

/* The same for a server whose wake a sender on another core handed to the
 * requester's poll itself (ICA_RESULT_SERVER_WOKEN): `server_pid`, parked
 * in its receive on this core with the request `id` pasted into it. When it
 * cannot run at once, or the requester may not sleep, it is handed the core
 * as any woken process is; this returns, and the caller collects. */
void ica_fast_run_handed_server(uint64_t id, uint32_t server_pid);
