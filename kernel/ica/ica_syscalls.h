/* ica_syscalls.h: the ICA system calls (numbers 20-29 of formica/syscalls.h)
 * and the pieces of ICA delivery that message handlers need. */
#pragma once
#include "cpu.h"
#include "process.h"
#include "shared.h"
#include "trap.h"
#include <formica/ica.h>
#include <stdbool.h>

/* A synchronous request made by the kernel for the running process with a
 * control ICA that process holds (the pager's fault requests). */
long ica_call_for_current(uint32_t server_pid, uint64_t control_id);
/* Sends a travelling control ICA (with its attachments) back to `target`
 * as a result; when the target is gone the ICAs are discarded. */
void ica_deliver_result(uint32_t target, uint64_t control_id);
/* What a call goes on with once its control ICA has left (the general path
 * after sending, the fast path when the caller is woken the ordinary way):
 * a synchronous request's wait for its result, and a server's receive.
 * ica_collect_result polls first when nothing is queued; a caller that
 * polled itself (the fast path, ica_fastpath.c, which decides what a poll
 * that handed it a server leads to) goes on with ica_collect_after_poll,
 * `polled` telling whether that poll ended in vain. */
long ica_collect_result(uint64_t control_id, uint32_t flags);
long ica_collect_after_poll(uint64_t control_id, uint32_t flags, bool polled);
/* The poll's `ready` for a collect: results came since the last look.
 * Inline, so the poll that calls it every turn keeps its values in
 * registers (a call would make it spill them around each look). */
static inline bool ica_results_came(void)
{
    const struct process *process = this_cpu()->current;
    return ring_count(&process->results.ring) > process->results_seen;
}
/* Pastes the result `id`, travelling to the caller, into it (false: stale). */
bool ica_accept_result(uint64_t id);
/* A request's send half (checked, stamped, refusals logged): 0 once the
 * control ICA has left; with ICA_SYNC a receiver on this core runs next. */
long ica_send_request(uint32_t server_pid, uint64_t control_id, uint32_t flags);
long ica_receive_until(uint32_t flags, uint64_t wake_tick);
/* ica_receive_until for a server that has just sent its request or result
 * on (its rings are most likely empty): the poll first, then the one
 * request it saw come, without the general receive's first look. */
long ica_receive_after_send(uint32_t flags, uint64_t wake_tick);
/* For the fast path's resume of a server parked in its receive on this
 * core (ica_fastpath.c): its one pending request, in the ring its sender
 * noted, popped and pasted into it; 0 when there is not exactly that (the
 * server then takes its requests itself). */
uint64_t ica_take_noted_request_for(struct process *server_process);
/* The general calls the fast path serves (declared for the dispatch in the
 * generated syscall_table.h), which it enters itself with arguments it has
 * checked as the dispatch does, when the receiver is not parked here. */
long sys_ica_forward_receive(uint32_t server, uint64_t control, uint32_t forward_flags,
                             uint32_t flags, uint64_t timeout_ms);
long sys_ica_return_receive(uint64_t id, uint32_t flags, uint64_t timeout_ms);
/* The tick of this core at which a receive with `flags` gives up (0: never). */
static inline uint64_t ica_receive_wake_tick(uint32_t flags, uint64_t timeout_ms)
{
    if (!(flags & ICA_TIMEOUT))
        return 0;
    uint64_t period = kernel_shared->tick_period_ms;
    uint64_t ticks = (timeout_ms + period - 1) / period;
    return this_cpu()->timer_ticks + (ticks > 0 ? ticks : 1);
}
