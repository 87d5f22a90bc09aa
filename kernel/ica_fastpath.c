/* ica_fastpath.c: a request, forward or result handed in one pass to a
 * process of this core that is parked where it can take it: a server
 * blocked in its receive, or a requester waiting for this very result. The
 * sender's kernel does both halves of the handover (ica_handover.c), parks
 * the sender and resumes the receiver straight in user mode with its system
 * call's return value, so the receiver's kernel runs no receive loop, no
 * wait and no scheduler pass (seL4's fastpath, L4's direct switch). A case
 * it does not cover returns false and goes the general way (ica_syscalls.c). */
#include "ica_fastpath.h"
#include "atomic.h"
#include "console.h"
#include "cpu.h"
#include "ica_handover.h"
#include "ica_syscalls.h"
#include "scheduler.h"
#include "trap.h"
#include "x86.h"
#include <formica/errors.h>
#include <formica/syscalls.h>

/* syscall_entry.S: returns to user mode with the system-call frame at %rsp. */
extern char syscall_exit[];

static struct process *me(void)
{
    return this_cpu()->current;
}

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

/* The control ICA `id`, held by `sender`, with what it carries, when the
 * fast path can hand it over: no data ICA handed over (pasting one may need
 * new page tables from the m-kernel) and only one-page ICAs lent. */
static inline __attribute__((always_inline)) bool ready_to_hand_over(struct process *sender,
                                                                     uint64_t id,
                                                                     struct ica **control,
                                                                     struct attachments *with)
{
    if (ica_held_by(sender, id, ICA_KIND_CONTROL, control) != 0 ||
        ica_read_attachments(sender, *control, with) != 0 || with->data_count != 0)
        return false;
    for (uint32_t i = 0; i < with->lent_count; i++)
        if (with->lent[i]->pages != 1)
            return false;
    return true;
}

/* Takes over the wake a sender owes `target` (as wake_or_hand_off does):
 * false when another core already cleared its flag and will wake it. */
static inline bool claim_wake(struct process *target)
{
    return atomic_swap(&target->ica_waiting, 0) != 0;
}

/* The server `pid` if it is parked in its receive on this core, may run at
 * once and has no older request to take first. */
static inline struct process *parked_server(uint32_t pid)
{
    struct process *server = process_find(pid);
    if (server == NULL || server->parked != PARKED_IN_RECEIVE ||
        !scheduler_may_switch_directly(server) || server->direct_request != 0)
        return NULL;
    struct server_entry *entry = server_of_process(server);
    if (entry == NULL || server_has_requests(entry))
        return NULL;
    return server;
}

/* The requester `pid` if it is parked on this core waiting for `id`. */
static inline struct process *parked_requester(uint32_t pid, uint64_t id)
{
    struct process *requester = process_find(pid);
    if (requester == NULL || requester->parked != PARKED_IN_CALL || requester->parked_for != id ||
        !scheduler_may_switch_directly(requester))
        return NULL;
    return requester;
}

/* Parks the running server for its next request, as its receive would,
 * unless that receive would not block. The flag goes up before the rings
 * are looked at (as in wait_for_ica_until), so a request another core
 * pushes meanwhile wakes it the ordinary way. */
static inline bool park_in_receive(struct process *server, uint32_t flags, uint64_t wake_tick)
{
    struct server_entry *entry = server_of_process(server);
    if (entry == NULL || (flags & (ICA_NO_WAIT | ICA_OR_IRQ)))
        return false; /* ICA_OR_IRQ arms a device line around the wait: the general path */
    atomic_store_fenced(&server->ica_waiting, 1); /* a full barrier (xchg) */
    if (server->direct_request != 0 || server_has_requests(entry) ||
        ((flags & ICA_OR_RESULT) && !ring_is_empty(&server->results.ring)) ||
        (wake_tick != 0 && this_cpu()->timer_ticks >= wake_tick)) {
        atomic_store_release(&server->ica_waiting, 0);
        return false;
    }
    server->parked = PARKED_IN_RECEIVE;
    return true;
}

static inline void park_in_call(struct process *requester, uint64_t id)
{
    requester->parked = PARKED_IN_CALL;
    requester->parked_for = id;
    atomic_store_fenced(&requester->ica_waiting, 1);
}

static inline void unpark(struct process *process)
{
    process->parked = PARKED_NOWHERE;
    atomic_store_release(&process->ica_waiting, 0);
}

/* After a wake the ordinary way: the parked caller goes on, or ends if it
 * was killed meanwhile (as after any wait for an ICA). */
static void resumed_slowly(struct process *process)
{
    unpark(process);
    if (process->kill_requested)
        scheduler_exit_current(PROCESS_EXIT_KILLED);
}

/* Where the fast path's arrival failed (a window's page table missing: its
 * tables are made at process creation, so it should not happen): the ICA,
 * travelling to `target`, waits where the general path leaves it, and the
 * target, woken, takes it (or drops it as stale, with a log line). */
static void deliver_the_ordinary_way(struct ica *control, struct process *target, uint32_t delivery)
{
    uint64_t id = ica_id_of(control);
    kprintf("ica: pid %u: fast handover of 0x%lx failed; delivered the ordinary way\n", me()->pid,
            id);
    if (delivery == ICA_AS_REQUEST)
        target->direct_request = id;
    else if (!ring_push_u64(&target->results.ring, id))
        kprintf("ica: result ring of pid %u full; result 0x%lx lost\n", target->pid, id);
    scheduler_wake(target);
}

/* Whether the running process may still sleep where it parked: nobody
 * cleared its flag (a sender on another core that did owes it a wake, and
 * that wake, served while it still ran, was dropped) and it is not being
 * killed. Messages can be served during a handover (an m-kernel call). */
static inline bool may_still_sleep(const struct process *sender)
{
    return atomic_load_acquire(&sender->ica_waiting) && !sender->kill_requested;
}

/* Hands `control` from the running process to `target`, whose system call
 * then returns `value`: at once, by a direct switch, while the running
 * process blocks (WAIT_ICA, or until `wake_tick`) until it is resumed. If
 * anything changed during the handover, `target` is made ready instead (it
 * returns from its call when it is scheduled) and the running process
 * blocks the ordinary way, or goes on when it must not sleep. */
static void hand_over_and_switch(struct ica *control, const struct attachments *with,
                                 struct process *target, uint32_t delivery, long value,
                                 uint64_t wake_tick)
{
    struct process *sender = me();
    uint32_t reason = wake_tick != 0 ? WAIT_SLEEP : WAIT_ICA;
    /* ready_to_hand_over let through no data ICA, only one-page lends */
    if (!ica_hand_over_without_data(sender, control, with, target, delivery)) {
        deliver_the_ordinary_way(control, target, delivery);
    } else {
        target->parked = PARKED_NOWHERE; /* it leaves the call it was parked in */
        struct trap_frame *frame = frame_returning(target, value);
        /* what the handover could change: messages it served (an m-kernel
         * call) may have woken the target or taken the sender's wake */
        if (may_still_sleep(sender) && target->state == PROCESS_WAITING) {
            scheduler_block_and_return_to(reason, wake_tick, target, frame);
            resumed_slowly(sender);
            return;
        }
        target->saved_rsp = stack_returning(frame);
        scheduler_wake(target);
    }
    invlpg(ica_virtual_address(control)); /* the sender runs on in its address space */
    if (may_still_sleep(sender))
        scheduler_block(reason, wake_tick);
    resumed_slowly(sender);
}

/* A synchronous request to a server parked on this core. */
static inline bool fast_call(uint32_t server_pid, uint64_t id)
{
    struct process *caller = me();
    struct ica *control;
    struct attachments with;
    struct process *server = parked_server(server_pid);
    if (server == NULL || server == caller || !ready_to_hand_over(caller, id, &control, &with) ||
        !claim_wake(server))
        return false;
    control->origin = caller->pid;
    control->return_depth = 1;
    control->returns[0] = caller->pid;
    park_in_call(caller, id);
    hand_over_and_switch(control, &with, server, ICA_AS_REQUEST, (long)id, 0);
    return true;
}

/* A middle stage's forward to a server parked on this core, and its own
 * next receive. */
static inline bool fast_forward_receive(uint32_t server_pid, uint64_t id, uint32_t forward_flags,
                                        uint32_t flags, uint64_t wake_tick)
{
    struct process *forwarder = me();
    struct ica *control;
    struct attachments with;
    bool via_me = forward_flags & ICA_RETURN_VIA_ME;
    struct process *server = parked_server(server_pid);
    if (server == NULL || server == forwarder || (forward_flags & ~ICA_RETURN_VIA_ME) != 0 ||
        !ready_to_hand_over(forwarder, id, &control, &with) ||
        control->delivery != ICA_AS_REQUEST || (via_me && control->return_depth >= ICA_MAX_RETURNS))
        return false;
    if (!park_in_receive(forwarder, flags, wake_tick))
        return false;
    if (!claim_wake(server)) {
        unpark(forwarder);
        return false;
    }
    if (via_me)
        control->returns[control->return_depth++] = forwarder->pid;
    hand_over_and_switch(control, &with, server, ICA_AS_REQUEST, (long)id, wake_tick);
    return true;
}

/* A server's result to a requester parked on this core, and its own next
 * receive. */
static inline bool fast_return_receive(uint64_t id, uint32_t flags, uint64_t wake_tick)
{
    struct process *server = me();
    struct ica *control;
    struct attachments with;
    if (!ready_to_hand_over(server, id, &control, &with) || control->return_depth == 0 ||
        control->return_depth > ICA_MAX_RETURNS)
        return false;
    struct process *requester = parked_requester(control->returns[control->return_depth - 1], id);
    if (requester == NULL || requester == server || !park_in_receive(server, flags, wake_tick))
        return false;
    if (!claim_wake(requester)) {
        unpark(server);
        return false;
    }
    control->return_depth--;
    hand_over_and_switch(control, &with, requester, ICA_AS_RESULT, 0, wake_tick);
    return true;
}

/* The arguments are checked as the generated dispatch checks them (an
 * argument out of range goes the general way, which refuses it). */
bool ica_fast_path(struct trap_frame *frame)
{
    if (frame->rax == SYS_ICA_REQUEST) {
        if (frame->rdi > UINT32_MAX || frame->rdx != ICA_SYNC ||
            !fast_call((uint32_t)frame->rdi, frame->rsi))
            return false;
        frame->rax = (uint64_t)ica_collect_result(frame->rsi, ICA_SYNC);
        return true;
    }
    uint64_t flags_argument = frame->rax == SYS_ICA_FORWARD_RECEIVE ? frame->r10 : frame->rsi;
    uint64_t timeout_ms = frame->rax == SYS_ICA_FORWARD_RECEIVE ? frame->r8 : frame->rdx;
    if (flags_argument > UINT32_MAX)
        return false;
    uint32_t flags = (uint32_t)flags_argument;
    uint64_t wake_tick = ica_receive_wake_tick(flags, timeout_ms);
    if (frame->rax == SYS_ICA_FORWARD_RECEIVE) {
        if (frame->rdi > UINT32_MAX || frame->rdx > UINT32_MAX ||
            !fast_forward_receive((uint32_t)frame->rdi, frame->rsi, (uint32_t)frame->rdx, flags,
                                  wake_tick))
            return false;
    } else if (!fast_return_receive(frame->rdi, flags, wake_tick)) {
        return false;
    }
    frame->rax = (uint64_t)ica_receive_until(flags, wake_tick);
    return true;
}
