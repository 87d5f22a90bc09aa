/* ica_fastpath.h: the common case of an ICA handover in one pass (seL4's
 * IPC fastpath, L4's direct switch): a control ICA to a process of this
 * core parked where it can take it, resumed straight in user mode. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Where a process blocked for an ICA is parked (struct process.parked). */
enum ica_parked {
    PARKED_NOWHERE = 0,
    PARKED_IN_RECEIVE, /* a server in ica_receive (or a combined call's receive) */
    PARKED_IN_CALL,    /* a requester in a synchronous ica_request, for parked_for */
};

/* Each returns false when the fast path does not apply: the caller then
 * does the general call, which also reports any error. True means the
 * handover was done and the caller was parked; it returns only when the
 * caller is woken the ordinary way, and must then go on as its general
 * path would after the handover (collect the result / receive). */
bool ica_fast_call(uint32_t server_pid, uint64_t control_id);
bool ica_fast_forward_receive(uint32_t server_pid, uint64_t control_id, uint32_t forward_flags,
                              uint32_t flags, uint64_t wake_tick);
bool ica_fast_return_receive(uint64_t control_id, uint32_t flags, uint64_t wake_tick);
