/* ica_fastpath.c: a request, forward or result handed in one pass to a
 * process of this core that is parked where it can take it: a server
 * blocked in its receive, or a requester waiting for this very result. The
 * sender's kernel checks everything first (the ICA, what it lends, the
 * receiver's park, the page-table entries the move writes), then changes
 * what it must, parks the sender and resumes the receiver straight in user
 * mode with its system call's return value: no receive loop, no wait, no
 * scheduler pass (seL4's fastpath, L4's direct switch). A case it does not
 * cover returns false before anything changed and goes the general way
 * (ica_syscalls.c). */
#include "ica_fastpath.h"
#include "atomic.h"
#include "ica_across.h"
#include "cpu.h"
#include "ica_handover.h"
#include "ica_poll.h"
#include "ica_syscalls.h"
#include "ica_wait.h"
#include "scheduler.h"
#include "scheduler_switch.h"
#include "trap.h"
#include "x86.h"
#include <formica/errors.h>
#include <formica/protocol/syscall_arguments.h>
#include <formica/syscalls.h>

/* syscall_entry.S: returns to user mode with the system-call frame at %rsp. */
extern char syscall_exit[];

/* A handover checked before anything changes: the control ICA, the
 * one-page ICAs it lends, and every page-table entry the move writes. */
struct checked_handover {
    struct ica *control;
    struct attachments with;
    uint64_t *from_entry, *to_entry;          /* the control ICA's, in sender and receiver */
    uint64_t *lent_entries[ICA_MAX_ATTACHED]; /* each lent ICA's, in the receiver */
};

/* The system-call frame of `process`, parked inside a system call, with
 * `value` as that call's result. */
static inline struct trap_frame *frame_returning(struct process *process, long value)
{
    uint64_t top = process_kernel_stack_top(process);
    struct trap_frame *frame = (struct trap_frame *)(top - sizeof(struct trap_frame));
    frame->rax = (uint64_t)value;
    return frame;
}

/* A kernel stack for `process` whose frame_returning is set, on which a
 * switch_context lands in syscall_exit (for when the scheduler runs it).
 * The frames of the call it was parked in are abandoned: a parked process
 * holds nothing there (no lock, no half-done change). */
static uint64_t stack_returning(struct trap_frame *frame)
{
    uint64_t *stack = (uint64_t *)frame;
    *--stack = (uint64_t)syscall_exit; /* switch_context's ret */
    return (uint64_t)(stack - 6);      /* the callee-saved registers it pops: unused */
}

/* The control ICA `id`, held by `sender`, when the fast path can hand it
 * over: no data ICA handed over (pasting one may need new page tables from
 * the m-kernel), only one-page ICAs lent, and the control ICA's entry
 * remembered in the sender. */
static inline __attribute__((always_inline)) bool control_movable(struct process *sender,
                                                                  struct checked_handover *handover)
{
    if (ica_read_attachments(sender, handover->control, &handover->with) != 0 ||
        handover->with.data_count != 0)
        return false;
    handover->from_entry = ica_control_leaf_entry(sender, handover->control->index);
    return handover->from_entry != NULL;
}

static inline __attribute__((always_inline)) bool control_ready(struct process *sender, uint64_t id,
                                                                struct checked_handover *handover)
{
    return ica_held_by(sender, id, ICA_KIND_CONTROL, &handover->control) == 0 &&
           control_movable(sender, handover);
}

/* The entries the move writes in `receiver`: the control ICA's and each
 * lent one-page ICA's, all in tables the receiver has remembered. */
static inline __attribute__((always_inline)) bool
receiver_entries_ready(struct process *receiver, struct checked_handover *handover)
{
    handover->to_entry = ica_control_leaf_entry(receiver, handover->control->index);
    if (handover->to_entry == NULL)
        return false;
    for (uint32_t i = 0; i < handover->with.lent_count; i++) {
        struct ica *lent = handover->with.lent[i];
        handover->lent_entries[i] = lent->pages == 1 ? ica_window_entry(receiver, lent) : NULL;
        if (handover->lent_entries[i] == NULL)
            return false;
    }
    return true;
}

/* The process `pid` if it is parked `where` on this core (in a call: for
 * `id`) and may run at once. Parked implies it is a live process of this
 * core blocked in that call; scheduler_may_switch_directly checks the rest.
 * A parked server's own rings need no look: a request pushed or handed to
 * it since it parked cleared its ica_waiting, which ica_wake_claim then finds. */
static inline struct process *parked_here(uint32_t pid, uint32_t where, uint64_t id)
{
    struct process *process = &kernel_shared->processes[pid % PROCESS_SLOTS];
    if (process->pid != pid || process->parked != where ||
        (where == PARKED_IN_CALL && process->parked_for != id) ||
        !scheduler_may_switch_directly(process))
        return NULL;
    return process;
}

/* Parks the running server for its next request, as its receive would,
 * unless that receive would not block. The flag goes up before the rings
 * are looked at (as in wait_for_ica_until), so a request another core
 * pushes meanwhile wakes it the ordinary way. */
static inline bool park_in_receive(struct process *server, uint32_t flags, uint64_t wake_tick)
{
    if (flags & (ICA_NO_WAIT | ICA_OR_IRQ))
        return false; /* ICA_OR_IRQ arms a device line around the wait: the general path */
    struct server_entry *entry = server_of_process(server);
    if (entry == NULL)
        return false;
    ica_wait_announce(server);
    if (server->direct_request != 0 || server_has_requests(entry) ||
        ((flags & ICA_OR_RESULT) && !ring_is_empty(&server->results.ring)) ||
        (wake_tick != 0 && this_cpu()->timer_ticks >= wake_tick)) {
        ica_wait_over(server);
        return false;
    }
    ica_park(server, PARKED_IN_RECEIVE, 0);
    return true;
}

static inline void park_in_call(struct process *requester, uint64_t id)
{
    ica_park(requester, PARKED_IN_CALL, id);
    ica_wait_announce(requester);
}

/* After a wake the ordinary way: the parked caller goes on, or ends if it
 * was killed meanwhile (as after any wait for an ICA). */
static void resumed_slowly(struct process *process)
{
    ica_unpark(process);
    if (process->kill_requested)
        scheduler_exit_current(PROCESS_EXIT_KILLED);
}

/* The checked handover itself: what was lent to the sender with the control
 * ICA is given back, what it lends goes with it (mapped read-only in the
 * receiver), the control ICA's entry moves and the kernel's routing is
 * written into its page. True when an orphan's free went to the m-kernel
 * meanwhile (the only step that may have had this core serve messages). */
static inline __attribute__((always_inline)) bool hand_over(struct process *sender,
                                                            struct process *receiver,
                                                            struct checked_handover *handover,
                                                            uint32_t delivery)
{
    struct ica *control = handover->control;
    bool called_out = false;
    if (control->lent_count > 0 || handover->with.lent_count > 0)
        called_out = ica_change_lends(sender, control, &handover->with);
    control->attached_count = 0;
    ica_stamp_sender(control, sender, delivery);
    control->destination = receiver->pid;
    ica_move_entry(control, handover->from_entry, handover->to_entry, receiver);
    if (this_cpu()->pcid_on) /* the switch to the receiver keeps the sender's entries */
        invlpg(ica_virtual_address(control));
    for (uint32_t i = 0; i < handover->with.lent_count; i++)
        ica_lend_entry_into(handover->lent_entries[i], handover->with.lent[i]);
    ica_write_arrival(control, NULL);
    ica_note_client(receiver, control);
    return called_out;
}

/* Whether the running process may still sleep where it parked: nobody
 * cleared its flag (a sender on another core that did owes it a wake, and
 * that wake, served while it still ran, was dropped) and it is not being
 * killed. */
static inline bool may_still_sleep(const struct process *sender)
{
    return ica_wait_still_announced(sender) && !sender->kill_requested;
}

/* When the handover served messages (called_out): they may have woken the
 * receiver or taken the sender's wake. The receiver is made ready (it
 * returns from its call when it is scheduled); the sender, which runs on in
 * its address space, drops what it no longer maps and blocks the ordinary
 * way, or goes on when it must not sleep. */
static __attribute__((noinline)) void switch_after_messages(struct process *sender,
                                                            struct process *receiver,
                                                            struct trap_frame *frame,
                                                            uint64_t wake_tick)
{
    receiver->saved_rsp = stack_returning(frame);
    scheduler_wake(receiver);
    write_cr3(read_cr3()); /* the control ICA's and the ended lends' entries */
    if (may_still_sleep(sender))
        scheduler_block(wake_tick != 0 ? WAIT_SLEEP : WAIT_ICA, wake_tick);
    resumed_slowly(sender);
}

/* The receiver's system call returns `value` at once, by a direct switch,
 * while the running process blocks (WAIT_ICA, or until `wake_tick`) until
 * it is resumed. The switch writes CR3: without PCID the sender's stale
 * entry of the control ICA goes with it; under PCID, hand_over invalidated
 * it. Returns when the sender is woken the ordinary way. */
static inline __attribute__((always_inline)) void switch_to_receiver(struct process *sender,
                                                                     struct process *receiver,
                                                                     long value, uint64_t wake_tick,
                                                                     bool called_out)
{
    ica_park_leave(receiver); /* it leaves the call it was parked in */
    struct trap_frame *frame = frame_returning(receiver, value);
    if (called_out && !(may_still_sleep(sender) && receiver->state == PROCESS_WAITING)) {
        switch_after_messages(sender, receiver, frame, wake_tick);
        return;
    }
    scheduler_block_and_return_to(wake_tick, receiver, frame);
    resumed_slowly(sender);
}

/* A synchronous request to a server parked on this core. */
static inline bool fast_call(uint32_t server_pid, uint64_t id)
{
    struct process *caller = this_cpu()->current;
    struct checked_handover handover;
    struct process *server = parked_here(server_pid, PARKED_IN_RECEIVE, 0);
    if (server == NULL || !control_ready(caller, id, &handover) ||
        !receiver_entries_ready(server, &handover) || !ica_wake_claim(server))
        return false;
    ica_route_start(handover.control, caller->pid);
    park_in_call(caller, id);
    bool called_out = hand_over(caller, server, &handover, ICA_AS_REQUEST);
    server->requests_handed++;
    switch_to_receiver(caller, server, (long)id, 0, called_out);
    return true;
}

/* A middle stage's forward to a server parked on this core, and its own
 * next receive. */
static inline bool fast_forward_receive(uint32_t server_pid, uint64_t id, uint32_t forward_flags,
                                        uint32_t flags, uint64_t wake_tick)
{
    struct process *forwarder = this_cpu()->current;
    struct checked_handover handover;
    bool via_me = forward_flags & ICA_RETURN_VIA_ME;
    if ((forward_flags & ~ICA_RETURN_VIA_ME) != 0)
        return false;
    struct process *server = parked_here(server_pid, PARKED_IN_RECEIVE, 0);
    if (server == NULL || !control_ready(forwarder, id, &handover) ||
        handover.control->delivery != ICA_AS_REQUEST ||
        (via_me && handover.control->return_depth >= ICA_MAX_RETURNS) ||
        !receiver_entries_ready(server, &handover) || !park_in_receive(forwarder, flags, wake_tick))
        return false;
    if (!ica_wake_claim(server)) {
        ica_unpark(forwarder);
        return false;
    }
    if (via_me)
        ica_route_push(handover.control, forwarder->pid);
    bool called_out = hand_over(forwarder, server, &handover, ICA_AS_REQUEST);
    server->requests_handed++;
    switch_to_receiver(forwarder, server, (long)id, wake_tick, called_out);
    return true;
}

/* A server's result to a requester parked on this core, and its own next
 * receive. */
static inline bool fast_return_receive(uint64_t id, uint32_t flags, uint64_t wake_tick,
                                       bool *across)
{
    struct process *server = this_cpu()->current;
    struct checked_handover handover;
    if (ica_held_by(server, id, ICA_KIND_CONTROL, &handover.control) != 0)
        return false;
    uint32_t depth = handover.control->return_depth;
    if (depth == 0 || depth > ICA_MAX_RETURNS)
        return false;
    /* the requester first: one on another core takes the one pass across */
    uint32_t requester_pid = handover.control->returns[depth - 1];
    struct process *requester = parked_here(requester_pid, PARKED_IN_CALL, id);
    if (requester == NULL) {
        struct process *elsewhere = process_find(requester_pid);
        *across = elsewhere != NULL && elsewhere->core != this_cpu()->index &&
                  elsewhere->state != PROCESS_ZOMBIE &&
                  ica_across_return_to(handover.control, elsewhere, id);
        return false;
    }
    if (!control_movable(server, &handover) || !receiver_entries_ready(requester, &handover) ||
        !park_in_receive(server, flags, wake_tick))
        return false;
    if (!ica_wake_claim(requester)) {
        ica_unpark(server);
        return false;
    }
    ica_route_pop(handover.control);
    bool called_out = hand_over(server, requester, &handover, ICA_AS_RESULT);
    switch_to_receiver(server, requester, 0, wake_tick, called_out);
    return true;
}

/* The server handed this core by a poll (ica_poll.c: a sender on another
 * core pushed it a request while the caller polled for its result `id`),
 * when it is parked in its receive and may run at once; the hand-off is
 * taken. NULL (the hand-off left as it was) otherwise. */
static inline struct process *handed_off_server(struct cpu *cpu)
{
    struct process *server = cpu->handoff;
    if (server == NULL || server->parked != PARKED_IN_RECEIVE || server->direct_request != 0)
        return NULL;
    cpu->handoff = NULL;
    if (!scheduler_may_switch_directly(server)) {
        cpu->handoff = server;
        return NULL;
    }
    return server;
}

/* The server goes on the ordinary way: handed the core again, or (when it
 * holds a request already pasted into it) ready to return it. */
static void leave_server(struct cpu *cpu, struct process *server, uint64_t pasted)
{
    if (pasted == 0) {
        cpu->handoff = server;
        return;
    }
    ica_park_leave(server);
    server->saved_rsp = stack_returning(frame_returning(server, (long)pasted));
    scheduler_wake(server);
}

/* A synchronous requester whose poll for its result `id` ended because a
 * sender on another core woke a server of this core parked in its receive
 * (ica_poll.c handed it the core): the server's one noted request taken
 * and pasted, the requester parked for `id` and the switch to the server,
 * whose receive returns the request at once. Returns when the requester is
 * woken the ordinary way (or when none of this applies). */
static void ica_fast_resume_handed_off(uint64_t id)
{
    struct cpu *cpu = this_cpu();
    struct process *requester = cpu->current;
    struct process *server = handed_off_server(cpu);
    if (server == NULL)
        return;
    park_in_call(requester, id); /* a full barrier: a result from now on wakes it */
    uint64_t request = ring_is_empty(&requester->results.ring) && !requester->kill_requested
                           ? ica_take_noted_request_for(server)
                           : 0;
    if (request == 0 || !may_still_sleep(requester)) {
        /* its result is here, it is being killed, the server has no single
         * noted request, or taking it served a message that woke the
         * requester: nobody sleeps */
        ica_unpark(requester);
        leave_server(cpu, server, request);
        return;
    }
    ica_park_leave(server); /* it leaves the receive it was parked in */
    scheduler_block_and_return_to(0, server, frame_returning(server, (long)request));
    resumed_slowly(requester);
}

/* The request `id` a sender on another core pasted into `server`, counted
 * and published in its polled_request word, taken for it: false when it is
 * not the server's one pending request (its receive then takes it). */
static inline bool take_pasted_request(struct process *server, uint64_t id)
{
    struct server_entry *entry = server_of_process(server);
    if (entry == NULL || atomic_load_acquire(&entry->pushed) - entry->taken != 1 ||
        !ica_request_take_published(server, id))
        return false;
    entry->taken++;
    return true;
}

/* The same for a server whose wake a sender on another core handed to the
 * requester's poll itself (ICA_RESULT_SERVER_WOKEN): `server_pid`, parked
 * in its receive on this core with the request `id` pasted into it. When it
 * cannot run at once, or the requester may not sleep, it is handed the core
 * as any woken process is, and this returns. */
static void ica_fast_run_handed_server(uint64_t id, uint32_t server_pid)
{
    struct cpu *cpu = this_cpu();
    struct process *requester = cpu->current;
    struct process *server = process_find(server_pid);
    if (server == NULL || server->core != cpu->index)
        return; /* ended meanwhile: nothing to wake */
    if (server->parked != PARKED_IN_RECEIVE || server->direct_request != 0 ||
        !scheduler_may_switch_directly(server)) {
        scheduler_hand_off(server);
        return;
    }
    park_in_call(requester, id); /* a full barrier: a result from now on wakes it */
    bool taken = ring_is_empty(&requester->results.ring) && !requester->kill_requested &&
                 take_pasted_request(server, id);
    if (!taken || !may_still_sleep(requester)) {
        ica_unpark(requester);
        if (!taken)
            scheduler_hand_off(server);
        else
            leave_server(cpu, server, id);
        return;
    }
    ica_park_leave(server); /* it leaves the receive it was parked in */
    scheduler_block_and_return_to(0, server, frame_returning(server, (long)id));
    resumed_slowly(requester);
}

/* A synchronous requester's wait for its result `id` once its request has
 * left: the poll first when nothing is queued, and what a poll that ended
 * on a server of this core leads to (run it at once, or the server handed
 * the core by a poll, ica_fast_resume_handed_off); then the general collect. */
static long collect_sync(uint64_t id)
{
    struct process *process = this_cpu()->current;
    bool polled = false;
    if (ring_consumer_sees_empty(&process->results.ring)) {
        process->results_seen = 0;
        enum ica_polled_result handed = ica_poll_for_result(id, ica_results_came);
        if (handed == ICA_RESULT_PASTED ||
            (handed == ICA_RESULT_TRAVELLING && ica_accept_result(id)))
            return 0;
        if (handed == ICA_RESULT_SERVER_WOKEN)
            ica_fast_run_handed_server(id, process->poll_handed_server);
        else if (this_cpu()->handoff != NULL)
            ica_fast_resume_handed_off(id); /* returns when woken the ordinary way */
        else
            polled = !process->kill_requested;
    }
    return ica_collect_after_poll(id, ICA_SYNC, polled);
}

/* The general calls, for arguments in range whose receiver is not parked
 * here (one on another core, above all): entered directly, as the dispatch
 * would enter them, with the arguments read again from the frame (so the
 * fast path keeps its own copy in registers). Apart, so the fast path's own
 * frame stays small. */
static __attribute__((noinline)) bool request_generally(struct trap_frame *frame)
{
    struct ica_request_arguments call;
    if (!ica_request_arguments_of(frame, &call))
        return false; /* checked already: never */
    long error = ica_send_request(call.server, call.control, call.flags);
    frame->rax = (uint64_t)(error != 0 ? error : collect_sync(call.control));
    return true;
}

static __attribute__((noinline)) bool forward_receive_generally(struct trap_frame *frame)
{
    struct ica_forward_receive_arguments call;
    if (!ica_forward_receive_arguments_of(frame, &call))
        return false; /* checked already: never */
    frame->rax = (uint64_t)sys_ica_forward_receive(call.server, call.control, call.forward_flags,
                                                   call.flags, call.timeout_ms);
    return true;
}

static __attribute__((noinline)) bool return_receive_generally(struct trap_frame *frame)
{
    struct ica_return_receive_arguments call;
    if (!ica_return_receive_arguments_of(frame, &call))
        return false; /* checked already: never */
    frame->rax = (uint64_t)sys_ica_return_receive(call.id, call.flags, call.timeout_ms);
    return true;
}

/* SYS_ICA_REQUEST with ICA_SYNC: hand over and wait for the result here. */
static bool fast_request(struct trap_frame *frame)
{
    struct ica_request_arguments call;
    if (!ica_request_arguments_of(frame, &call) || call.flags != ICA_SYNC)
        return false;
    if (!fast_call(call.server, call.control) &&
        !ica_across_send(call.server, call.control, 0, false))
        return request_generally(frame);
    frame->rax = (uint64_t)collect_sync(call.control);
    return true;
}

/* SYS_ICA_FORWARD_RECEIVE: forward on this core, then receive. */
static inline __attribute__((always_inline)) bool
fast_forward_then_receive(struct trap_frame *frame)
{
    struct ica_forward_receive_arguments call;
    if (!ica_forward_receive_arguments_of(frame, &call))
        return false;
    uint64_t wake_tick = ica_receive_wake_tick(call.flags, call.timeout_ms);
    if (fast_forward_receive(call.server, call.control, call.forward_flags, call.flags,
                             wake_tick)) {
        frame->rax = (uint64_t)ica_receive_until(call.flags, wake_tick); /* woken slowly */
        return true;
    }
    if ((call.forward_flags & ~ICA_RETURN_VIA_ME) != 0 ||
        !ica_across_send(call.server, call.control, call.forward_flags, true))
        return forward_receive_generally(frame);
    frame->rax = (uint64_t)ica_receive_after_send(call.flags, wake_tick);
    return true;
}

/* SYS_ICA_RETURN_RECEIVE: return on this core, then receive. */
static bool fast_return_then_receive(struct trap_frame *frame)
{
    struct ica_return_receive_arguments call;
    if (!ica_return_receive_arguments_of(frame, &call))
        return false;
    uint64_t wake_tick = ica_receive_wake_tick(call.flags, call.timeout_ms);
    bool across = false;
    if (fast_return_receive(call.id, call.flags, wake_tick, &across)) {
        frame->rax = (uint64_t)ica_receive_until(call.flags, wake_tick); /* woken slowly */
        return true;
    }
    if (!across)
        return return_receive_generally(frame);
    frame->rax = (uint64_t)ica_receive_after_send(call.flags, wake_tick);
    return true;
}

/* The arguments are read and checked by the generated decoder the dispatch
 * uses (formica/protocol/syscall_arguments.h): out of range, the call goes
 * the general way through the dispatch, which refuses it. */
bool ica_fast_path(struct trap_frame *frame)
{
    if (frame->rax == SYS_ICA_REQUEST)
        return fast_request(frame);
    if (frame->rax == SYS_ICA_FORWARD_RECEIVE)
        return fast_forward_then_receive(frame);
    return fast_return_then_receive(frame);
}
