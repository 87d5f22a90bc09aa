/* ica_syscalls.c: requests, forwards, returns, receives and collects of
 * control ICAs (seed 003 §2.2.1, Fig. 2). A request goes straight into the
 * server's ring for the sender's core; a result goes into the requester's
 * result ring, through the inter-core area when it crosses cores. Nothing is
 * copied: each handover peels the ICAs from the sender and the receiver's
 * kernel pastes them. A process waiting for an ICA is woken (with an IPI
 * when it lives on another core); a busy one is never interrupted. */
#include "ica_syscalls.h"
#include "atomic.h"
#include "clock.h"
#include "console.h"
#include "cpu.h"
#include "ica.h"
#include "ica_handover.h"
#include "ica_poll.h"
#include "ica_wait.h"
#include "ica_room.h"
#include "fault_injection.h"
#include "intercore.h"
#include "irq.h"
#include "layout.h"
#include "lapic.h"
#include "mkernel_client.h"
#include "scheduler.h"
#include "shared.h"
#include "user_memory.h"
#include "x86.h"
#include <formica/errors.h>
#include <formica/log_limit.h>
#include <formica/rights.h>
#include <formica/syscalls.h>
#include <string.h>

#define NO_ICA UINT64_MAX

/* Where a wait inside a system call leaves the process for the fast path
 * (ica_fastpath.c): PARKED_NOWHERE for waits it must not cut short. */
struct parking {
    uint32_t where;
    uint64_t for_id;
};
#define NOT_PARKED ((struct parking){PARKED_NOWHERE, 0})

static struct process *me(void)
{
    return this_cpu()->current;
}

/* Logs a refused ICA call (bad id, ICA not held, unknown server, malformed
 * control ICA) and returns its error. Back-pressure (-E_BUSY) and an empty
 * ring under ICA_NO_WAIT are normal outcomes and are not logged. */
static long refused(const char *call, uint64_t id, long error)
{
    static struct log_limit limits[MAX_CORES]; /* each core's own: no lock */
    uint64_t held_back = 0;
    if (error >= 0 || error == -E_BUSY ||
        !log_limit_allow(&limits[this_cpu()->index], me()->pid, clock_cycles_to_us(rdtsc()),
                         &held_back))
        return error;
    if (held_back > 0)
        kprintf("ica: pid %u: %lu more refusals not shown\n", me()->pid, held_back);
    kprintf("ica: pid %u: %s of 0x%lx refused: %s\n", me()->pid, call, id, error_text(error));
    return error;
}

/* Wakes `target` if it waits for an ICA (the scheduler's wake: directly on
 * this core, else a wake message and an IPI to its core). With `hand_off`
 * (the caller is about to block) a target on this core runs next directly. */
static void wake_or_hand_off(struct process *target, bool hand_off)
{
    memory_fence();
    if (!ica_wake_claim_if_waiting(target))
        return;
    if (target->core == this_cpu()->index) {
        if (hand_off)
            scheduler_hand_off(target);
        else
            scheduler_wake(target);
        return;
    }
    ica_wake_across(target);
}

static void discard(uint64_t control_id)
{
    struct intercore_message message = {.type = MESSAGE_ICA_DISCARD, .ica_discard = {control_id}};
    mkernel_notify(&message);
}

static void push_result(struct process *target, uint64_t control_id, bool hand_off)
{
    if (!ring_push_u64(&target->results.ring, control_id)) {
        kprintf("ica: result ring of pid %u full; result discarded\n", target->pid);
        discard(control_id);
        return;
    }
    wake_or_hand_off(target, hand_off);
}

/* Delivers the result; false when `target_pid` is no process (it was discarded). */
static bool deliver_result(uint32_t target_pid, uint64_t control_id, bool hand_off)
{
    struct process *target = process_find(target_pid);
    if (target == NULL || target->state == PROCESS_ZOMBIE) {
        discard(control_id);
        return target != NULL;
    }
    if (target->core == this_cpu()->index) {
        push_result(target, control_id, hand_off);
        return true;
    }
    if (ica_hand_result_to_poller(target, control_id))
        return true; /* it polls for this very result: no message */
    struct intercore_message message = {.type = MESSAGE_ICA_RESULT,
                                        .ica_result = {target_pid, control_id}};
    memory_fence();
    if (ica_wake_claim(target) && scheduler_must_interrupt(target))
        intercore_send_preempting(target->core, &message);
    else
        intercore_send(target->core, &message); /* IPIs the core if it halts */
    return true;
}

void ica_deliver_result(uint32_t target_pid, uint64_t control_id)
{
    deliver_result(target_pid, control_id, false);
}

void serve_ica_result(const struct intercore_message *message,
                      const struct intercore_ica_result_request *request)
{
    (void)message;
    struct process *target = process_find((uint32_t)request->pid);
    if (target == NULL || target->core != this_cpu()->index || target->state == PROCESS_ZOMBIE) {
        discard(request->control);
        return;
    }
    if (!ring_push_u64(&target->results.ring, request->control)) {
        discard(request->control);
        return;
    }
    ica_wait_over(target);
    scheduler_wake(target);
}

/* The log line of a popped ICA that is stale (answered or freed meanwhile). */
static bool dropped_stale(const struct process *receiver, uint64_t id)
{
    kprintf("ica: pid %u: stale ICA 0x%lx dropped\n", receiver->pid, id);
    return false;
}

/* Pastes a popped ICA into `receiver`; false (with a log line) when it is
 * stale. Inline where one request is taken per receive (the noted take). */
static inline __attribute__((always_inline)) bool accept_inline(struct process *receiver,
                                                                uint64_t id)
{
    struct ica *ica = ica_lookup(id);
    if (ica != NULL && ica_arrive(receiver, ica))
        return true;
    return dropped_stale(receiver, id);
}

static bool accept_into(struct process *receiver, uint64_t id)
{
    return accept_inline(receiver, id);
}

/* Pastes a popped ICA into the caller. */
static bool accept(uint64_t id)
{
    return accept_into(me(), id);
}

/* The oldest usable request of a server's ring. Only the head is consumed:
 * another core is the ring's producer, so nothing may be pushed back. */
static inline uint64_t take_request_into(struct process *taker, struct server_entry *server,
                                         struct ring *ring, uint32_t core)
{
    uint64_t id;
    while (ring_pop_u64(ring, &id)) {
        server->taken++;
        ica_room_made(server, ring, core, taker->pid);
        if (accept_into(taker, id))
            return id;
    }
    return NO_ICA;
}

static inline uint64_t take_request(struct server_entry *server, struct ring *ring, uint32_t core)
{
    return take_request_into(me(), server, ring, core);
}

/* Takes `wanted` (or, with NO_ICA, the oldest entry) out of the caller's own
 * result ring; the others keep their order. Re-pushing is safe only here:
 * this core is both the producer and the consumer of a result ring. The
 * common case, the wanted result at the head, is one pop. */
static uint64_t take_from_ring(struct ring *ring, uint64_t wanted)
{
    const uint64_t *head = ring_peek(ring);
    if (head == NULL)
        return NO_ICA;
    if (wanted == NO_ICA || *head == wanted) {
        uint64_t id = NO_ICA;
        ring_pop_u64(ring, &id);
        return accept(id) ? id : take_from_ring(ring, wanted);
    }
    uint32_t count = ring_count(ring);
    uint64_t found = NO_ICA;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t id = NO_ICA;
        ring_pop_u64(ring, &id);
        if (found == NO_ICA && (wanted == NO_ICA || id == wanted)) {
            if (accept(id))
                found = id;
            continue;
        }
        ring_push_u64(ring, id);
    }
    return found;
}

/* Blocks for an ICA unless `ready()` turns true after announcing the wait.
 * A sender that clears ica_waiting owes us one wake; if this core handled
 * that wake in the poll below, while we were still running, it was dropped,
 * and blocking now would sleep through a result pushed later on this core
 * (whose sender finds ica_waiting already clear). So a cleared flag means
 * "look again", never "block". With wake_tick != 0 the wait also ends at
 * that tick of this core (a timed receive, ICA_TIMEOUT). */
static void wait_for_ica_until(bool (*ready)(void), uint64_t wake_tick, struct parking parking)
{
    struct process *process = me();
    ica_wait_announce(process);
    memory_fence();
    fault_injection_widen_ica_wait();
    intercore_poll();
    if (ready() || !ica_wait_still_announced(process) || process->kill_requested) {
        ica_wait_over(process);
        return;
    }
    ica_park(process, parking.where, parking.for_id);
    scheduler_block(wake_tick != 0 ? WAIT_SLEEP : WAIT_ICA, wake_tick);
    ica_unpark(process);
    if (process->kill_requested)
        scheduler_exit_current(PROCESS_EXIT_KILLED);
}

static void wait_for_ica(bool (*ready)(void), struct parking parking)
{
    wait_for_ica_until(ready, 0, parking);
}

static bool results_waiting(void)
{
    return !ring_is_empty(&me()->results.ring);
}

/* Takes the result `wanted` (NO_ICA: any), waiting for it unless told not to.
 * Results that are not the wanted one stay queued; the wait then lasts
 * until a new result arrives, so the caller sleeps instead of spinning.
 * With `polled` the caller has just polled for it in vain
 * (ica_collect_result): the first pass goes from the ring to the wait. */
static long collect_after(uint64_t wanted, bool wait, struct parking parking, bool polled)
{
    struct ring *ring = &me()->results.ring;
    for (;;) {
        uint32_t queued = ring_count(ring);
        uint64_t id = queued != 0 ? take_from_ring(ring, wanted) : NO_ICA;
        if (id != NO_ICA)
            return (long)id;
        me()->results_seen = queued != 0 ? ring_count(ring) : 0;
        bool poll = !polled;
        polled = false;
        if (poll && intercore_poll() > 0 && ica_results_came())
            continue;
        if (!wait)
            return -E_NOT_FOUND;
        enum ica_polled_result handed = poll && wanted != NO_ICA
                                            ? ica_poll_for_result(wanted, ica_results_came)
                                            : ICA_RESULT_NOT_HANDED;
        if (handed == ICA_RESULT_SERVER_WOKEN) {
            ica_poll_hand_server(this_cpu(), me()->poll_handed_server);
            handed = ICA_RESULT_NOT_HANDED; /* the result comes later: wait for it */
        }
        if (handed != ICA_RESULT_NOT_HANDED) {
            if (handed == ICA_RESULT_PASTED || accept(wanted))
                return (long)wanted;
            continue;
        }
        if (poll && wanted == NO_ICA && ica_poll_before_wait(ica_results_came) &&
            !me()->kill_requested)
            continue;
        if (me()->kill_requested)
            scheduler_exit_current(PROCESS_EXIT_KILLED);
        wait_for_ica(ica_results_came, parking);
    }
}

static long collect(uint64_t wanted, bool wait, struct parking parking)
{
    return collect_after(wanted, wait, parking, false);
}

/* The server may have ended between the lookup and the push: its rings
 * outlive it, but nobody will pop them. The m-kernel unregisters before it
 * answers a dead server's requests (with a fence); this check after the push
 * (with a fence) sees the unregistration whenever that scan missed the push,
 * and has the m-kernel answer the request instead. */
static void report_if_undelivered(const struct server_entry *server, uint32_t server_pid,
                                  uint64_t id)
{
    memory_fence();
    if (__atomic_load_n(&server->pid, __ATOMIC_ACQUIRE) == server_pid)
        return;
    struct intercore_message message = {.type = MESSAGE_ICA_UNDELIVERED, .ica_undelivered = {id}};
    mkernel_notify(&message);
}

/* A crowded ring (ica_room.c): the caller waits for room unless it asked
 * ICA_NO_WAIT, until `deadline` (a tick of this core; 0: no limit). The
 * kernel's own requests (a page fault) always wait. */
static long wait_for_room(struct server_entry *server, uint32_t server_pid, struct ring *ring,
                          uint32_t flags, uint64_t deadline)
{
    bool wait = !(flags & ICA_NO_WAIT) || (flags & ICA_FROM_KERNEL);
    return ica_room_wait(server, server_pid, ring, wait, deadline);
}

/* ICA_KEEP_SENDER's condition: the forwarder is an instance of the
 * destination's server name (logged when not). */
static bool forwards_within_its_server(const struct server_entry *destination)
{
    const struct server_entry *forwarder = server_of_process(me());
    if (forwarder != NULL && strncmp(forwarder->name, destination->name, SERVER_NAME_BYTES) == 0)
        return true;
    kprintf("ica: pid %u may not forward keeping the sender: not an instance of '%s'\n", me()->pid,
            destination->name);
    return false;
}

/* ica_depart; with `keep_sender` the stamp of whoever sent the request to
 * the forwarder stays (ICA_KEEP_SENDER). */
static void depart(struct ica *control, const struct attachments *with, uint32_t server_pid,
                   bool keep_sender)
{
    uint32_t rights = control->sender_rights, uid = control->sender_uid;
    uint32_t gid = control->sender_gid, account = control->sender_account;
    ica_depart(me(), control, with, server_pid, ICA_AS_REQUEST);
    if (keep_sender) {
        control->sender_rights = rights;
        control->sender_uid = uid;
        control->sender_gid = gid;
        control->sender_account = account;
    }
}

/* Checks the server and the control ICA, then hands it over. */
static long send_to_server(uint32_t server_pid, uint64_t id, uint32_t flags, bool forward,
                           bool hand_off, uint64_t room_deadline)
{
    struct ica *control;
    struct attachments with;
    long error = ica_held_by(me(), id, ICA_KIND_CONTROL, &control);
    if (error == 0)
        error = ica_read_attachments(me(), control, &with);
    if (error != 0)
        return error;
    struct process *target = process_find(server_pid);
    struct server_entry *server = target != NULL ? server_of_process(target) : NULL;
    if (server == NULL || target == NULL || target->state == PROCESS_ZOMBIE)
        return -E_NOT_FOUND;
    if (server_pid == me()->pid)
        return -E_INVALID;
    if (forward && (control->delivery != ICA_AS_REQUEST ||
                    ((flags & ICA_RETURN_VIA_ME) && control->return_depth == ICA_MAX_RETURNS)))
        return -E_INVALID;
    bool keep_sender = forward && (flags & ICA_KEEP_SENDER);
    if (keep_sender && !forwards_within_its_server(server))
        return -E_PERMISSION;
    bool lane = me()->account == INIT_PID;
    struct ring *ring =
        lane ? server_lane(server, this_cpu()->index) : server_ring(server, this_cpu()->index);
    if (ica_ring_crowded(ring)) {
        long waited = wait_for_room(server, server_pid, ring, flags, room_deadline);
        if (waited != 0)
            return waited;
    }
    if (!forward) {
        ica_route_start(control, me()->pid);
    } else if (flags & ICA_RETURN_VIA_ME) {
        ica_route_push(control, me()->pid);
    }
    depart(control, &with, server_pid, keep_sender);
    if (flags & ICA_FROM_KERNEL)
        control->sender_rights = RIGHT_KERNEL;
    if (target->core == this_cpu()->index && target->direct_request == 0 && ring_is_empty(ring)) {
        ica_direct_request_put(target, id); /* nothing older waits on this core: no ring */
        memory_fence();
    } else {
        ring_push_u64(ring, id);
        server_note_push(server, lane, this_cpu()->index);
        if (lane)
            atomic_add(&server->lane_pushed, 1); /* seen before `pushed` */
        atomic_add(&server->pushed, 1);          /* before the wake: a full barrier */
    }
    report_if_undelivered(server, server_pid, id);
    wake_or_hand_off(target, hand_off);
    return 0;
}

/* Where a synchronous request waits: parked for the fast path's result,
 * unless the kernel made it for the process (a page fault: no system call
 * to return from). */
static struct parking parking_of(uint32_t flags, uint64_t id)
{
    return (flags & ICA_FROM_KERNEL) ? NOT_PARKED : (struct parking){PARKED_IN_CALL, id};
}

/* A request; with ICA_SYNC, also the wait for its result. */
static long request(uint32_t server_pid, uint64_t id, uint32_t flags)
{
    long error = ica_send_request(server_pid, id, flags);
    if (error != 0 || !(flags & ICA_SYNC))
        return error;
    return ica_collect_result(id, flags);
}

bool ica_accept_result(uint64_t id)
{
    return accept(id);
}

long ica_collect_after_poll(uint64_t id, uint32_t flags, bool polled)
{
    long result = collect_after(id, true, parking_of(flags, id), polled);
    return result < 0 ? result : 0;
}

long ica_collect_result(uint64_t id, uint32_t flags)
{
    struct process *process = me();
    bool polled = false;
    if (ring_consumer_sees_empty(&process->results.ring)) {
        /* the common case across cores: nothing queued, the result comes
         * to the poll (collect's first pass, without its looks at an
         * empty ring) */
        process->results_seen = 0;
        enum ica_polled_result handed = ica_poll_for_result(id, ica_results_came);
        if (handed == ICA_RESULT_PASTED || (handed == ICA_RESULT_TRAVELLING && accept(id)))
            return 0;
        if (handed == ICA_RESULT_SERVER_WOKEN)
            ica_poll_hand_server(this_cpu(), process->poll_handed_server);
        else
            polled = !process->kill_requested;
    }
    return ica_collect_after_poll(id, flags, polled);
}

long ica_call_for_current(uint32_t server_pid, uint64_t control_id)
{
    return request(server_pid, control_id, ICA_SYNC | ICA_FROM_KERNEL);
}

long ica_send_request(uint32_t server_pid, uint64_t id, uint32_t flags)
{
    return refused("request", id,
                   send_to_server(server_pid, id, flags, false, flags & ICA_SYNC, 0));
}

long sys_ica_request(uint32_t server, uint64_t control, uint32_t flags)
{
    if (flags & ICA_FROM_KERNEL)
        return refused("request", control, -E_INVALID);
    return request(server, control, flags);
}

long sys_ica_forward(uint32_t server, uint64_t control, uint32_t flags)
{
    if (flags & ICA_FROM_KERNEL)
        return refused("forward", control, -E_INVALID);
    return refused("forward", control, send_to_server(server, control, flags, true, false, 0));
}

/* Sends the result back to the top of the return stack; with `hand_off` a
 * requester waiting on this core runs next once the caller blocks. */
static long return_result(uint64_t id, bool hand_off)
{
    struct ica *control;
    struct attachments with;
    long error = ica_held_by(me(), id, ICA_KIND_CONTROL, &control);
    if (error == 0)
        error = ica_read_attachments(me(), control, &with);
    if (error == 0 && (control->return_depth == 0 || control->return_depth > ICA_MAX_RETURNS))
        error = -E_INVALID;
    if (error != 0)
        return refused("return", id, error);
    uint32_t target = ica_route_pop(control);
    ica_depart(me(), control, &with, target, ICA_AS_RESULT);
    /* The ICA has left the caller either way: a requester that ended gets
     * nothing and the kernel frees it (an error here would tell the caller it
     * still held an ICA it had lost). */
    deliver_result(target, id, hand_off);
    return 0;
}

long sys_ica_return(uint64_t id)
{
    return return_result(id, false);
}

static bool requests_waiting(void)
{
    return me()->direct_request != 0 || server_has_requests(server_of_process(me()));
}

/* The request handed straight to the caller, pasted; NO_ICA when none (or stale). */
static uint64_t take_direct_request(void)
{
    uint64_t id = ica_direct_request_take(me());
    if (id == 0)
        return NO_ICA;
    if (!accept(id))
        return NO_ICA;
    me()->requests_handed++;
    return id;
}

static bool requests_or_results_waiting(void)
{
    return requests_waiting() || results_waiting();
}

/* ICA_OR_IRQ: the caller's device interrupt also ends the wait. */
static bool interrupt_pending(void)
{
    return irq_interrupt_pending(me());
}

static bool requests_or_interrupt(void)
{
    return requests_waiting() || interrupt_pending();
}

static bool requests_results_or_interrupt(void)
{
    return requests_or_results_waiting() || interrupt_pending();
}

static bool (*ready_test(uint32_t flags))(void)
{
    if (flags & ICA_OR_IRQ)
        return (flags & ICA_OR_RESULT) ? requests_results_or_interrupt : requests_or_interrupt;
    return (flags & ICA_OR_RESULT) ? requests_or_results_waiting : requests_waiting;
}

/* Where a receive waits: parked for the fast path, unless its device line
 * is armed around it (ICA_OR_IRQ: the fast path's resume would skip the
 * disarming after the wait). */
static struct parking receive_parking(uint32_t flags)
{
    return (flags & ICA_OR_IRQ) ? NOT_PARKED : (struct parking){PARKED_IN_RECEIVE, 0};
}

static long receive_armed(struct server_entry *server, uint32_t flags, uint64_t wake_tick);

long ica_receive_until(uint32_t flags, uint64_t wake_tick)
{
    struct server_entry *server = server_of_process(me());
    if (server == NULL)
        return refused("receive (not a server)", 0, -E_PERMISSION);
    if (!(flags & ICA_OR_IRQ))
        return receive_armed(server, flags, wake_tick);
    if (!irq_arm_ica_wait(me()))
        return -E_INVALID; /* no device line of its own */
    long result = receive_armed(server, flags, wake_tick);
    irq_disarm_ica_wait(me());
    return result;
}

/* The oldest request of the lanes (`lanes`) or of the client rings, round
 * robin over the cores from where the last take of that kind left off, or
 * NO_ICA. */
static uint64_t take_round_robin(struct server_entry *server, uint32_t cores, bool lanes)
{
    uint32_t *next = lanes ? &server->next_lane : &server->next_core;
    uint32_t core = *next < cores ? *next : 0;
    for (uint32_t step = 0; step < cores; step++, core = core + 1 == cores ? 0 : core + 1) {
        struct ring *ring = lanes ? server_lane(server, core) : server_ring(server, core);
        if (ring_consumer_sees_empty(ring))
            continue;
        uint64_t taken_before = server->taken;
        uint64_t id = take_request(server, ring, core);
        if (lanes)
            server->lane_taken += server->taken - taken_before;
        if (id != NO_ICA) {
            *next = core + 1 == cores ? 0 : core + 1;
            return id;
        }
    }
    return NO_ICA;
}

/* With one request pending, the ring its sender noted (server_note_push),
 * if that request is there: no look at the other rings. NO_ICA otherwise
 * (another sender's note came between: the caller looks at every ring). A
 * lane's request still goes first: the note is followed only when it names
 * a lane exactly when a lane request is pending. */
static inline __attribute__((always_inline)) uint64_t
take_the_one_pending(struct process *taker, struct server_entry *server, uint32_t cores)
{
    uint32_t index = __atomic_load_n(&server->last_pushed_ring, __ATOMIC_RELAXED);
    bool lane = index >= cores;
    uint32_t core = lane ? index - cores : index;
    if (core >= cores || lane != server_has_lane_requests(server))
        return NO_ICA;
    struct ring *ring = server_ring(server, index);
    if (ring_consumer_sees_empty(ring))
        return NO_ICA;
    uint64_t id = NO_ICA;
    ring_pop_u64(ring, &id); /* not empty: one pop, no loop (a stale one: NO_ICA) */
    server->taken++;
    uint32_t next = core + 1 == cores ? 0 : core + 1;
    if (lane) {
        server->lane_taken++;
        server->next_lane = next;
    } else {
        server->next_core = next;
    }
    ica_room_made(server, ring, core, taker->pid);
    return accept_inline(taker, id) ? id : NO_ICA;
}

uint64_t ica_take_noted_request_for(struct process *server_process)
{
    struct server_entry *server = server_of_process(server_process);
    if (server == NULL || server_process->direct_request != 0 ||
        atomic_load_acquire(&server->pushed) - server->taken != 1)
        return 0;
    uint64_t pasted = ica_request_take_pasted(server_process); /* counted: published */
    if (pasted != 0) {
        server->taken++;
        return pasted;
    }
    uint64_t id = take_the_one_pending(server_process, server, kernel_shared->core_count);
    return id != NO_ICA ? id : 0;
}

/* The next request for the caller: the one handed to it directly, then the
 * lanes', then the rings'; NO_ICA when none. Nothing pushed and nothing
 * handed over is two loads. */
static inline uint64_t take_next_request(struct server_entry *server)
{
    if (me()->direct_request != 0) {
        uint64_t direct = take_direct_request();
        if (direct != NO_ICA)
            return direct;
    }
    uint64_t pending = atomic_load_acquire(&server->pushed) - server->taken;
    if (pending == 0)
        return NO_ICA;
    uint64_t pasted = ica_request_take_pasted(me());
    if (pasted != 0) {
        server->taken++;
        return pasted;
    }
    uint32_t cores = kernel_shared->core_count;
    if (pending == 1) {
        uint64_t only = take_the_one_pending(me(), server, cores);
        if (only != NO_ICA)
            return only;
    }
    if (server_has_lane_requests(server)) {
        uint64_t from_lane = take_round_robin(server, cores, true);
        if (from_lane != NO_ICA)
            return from_lane;
    }
    return take_round_robin(server, cores, false);
}

/* What ends a receive that found no request, other than a request: a
 * result (ICA_OR_RESULT), the device interrupt (ICA_OR_IRQ), ICA_NO_WAIT or
 * the timeout. True with the receive's answer in *answer; false when none
 * (the receive waits). */
static bool receive_ends_otherwise(uint32_t flags, uint64_t wake_tick, long *answer)
{
    if (flags & ICA_OR_RESULT) {
        *answer = collect(NO_ICA, false, NOT_PARKED);
        if (*answer != -E_NOT_FOUND)
            return true;
    }
    *answer = -E_INTERRUPTED;
    if ((flags & ICA_OR_IRQ) && interrupt_pending())
        return true;
    *answer = -E_NOT_FOUND;
    return (flags & ICA_NO_WAIT) || (wake_tick != 0 && this_cpu()->timer_ticks >= wake_tick);
}

/* `pushed` said `counted` when the receive looked at everything and found
 * no request. A sender makes its request takeable (in a ring, or its id
 * published in polled_request) before it counts it, so a count not behind
 * a request then is none: one that outlived its request (added to a slot
 * registered again meanwhile). `taken` catches up with it, so the receive
 * blocks instead of spinning on the count. */
static void correct_count(struct server_entry *server, uint64_t counted)
{
    if (counted == server->taken)
        return;
    kprintf("ica: server pid %u: %lu requests counted, %lu taken, none left: count corrected\n",
            me()->pid, counted, server->taken);
    server->taken = counted;
}

/* The receive itself (with ICA_OR_IRQ, the line is armed around it). A
 * turn that finds no request although some are counted looks once more
 * (correct_count); a turn that finds none polls or blocks. A kill ends it
 * after a poll or a wait: a kill served by this core's inbox just before it
 * would block makes the wait return at once, and the loop must not go round
 * again in kernel mode (a core with other work ready does not poll, so only
 * this check ends it). */
static long receive_armed(struct server_entry *server, uint32_t flags, uint64_t wake_tick)
{
    bool looking_again = false;
    uint64_t counted = 0;
    for (;;) {
        uint64_t id = take_next_request(server);
        if (id != NO_ICA)
            return (long)id;
        if (server_has_requests(server)) {
            if (!looking_again) {
                counted = atomic_load_acquire(&server->pushed);
                looking_again = true;
                continue;
            }
            correct_count(server, counted);
        }
        looking_again = false;
        long answer;
        if ((flags != 0 || wake_tick != 0) && receive_ends_otherwise(flags, wake_tick, &answer))
            return answer;
        bool (*ready)(void) = ready_test(flags);
        if (!ica_poll_for_request(server, ready))
            wait_for_ica_until(ready, wake_tick, receive_parking(flags));
        if (me()->kill_requested)
            scheduler_exit_current(PROCESS_EXIT_KILLED);
    }
}

long ica_receive_after_send(uint32_t flags, uint64_t wake_tick)
{
    struct process *process = me();
    struct server_entry *server = server_of_process(process);
    bool or_result = flags & ICA_OR_RESULT;
    if (server == NULL || (flags & ~(ICA_TIMEOUT | ICA_OR_RESULT)) != 0 ||
        process->direct_request != 0 || server_has_requests(server) ||
        (or_result && results_waiting()) ||
        (wake_tick != 0 && this_cpu()->timer_ticks >= wake_tick))
        return ica_receive_until(flags, wake_tick);
    /* nothing pending: the poll first (a sender on another core may paste
     * its request into us meanwhile), then the request it saw come (a
     * result that came instead is the general receive's) */
    bool polled = ica_may_poll(this_cpu()) && ica_request_poll_arm(process);
    bool came =
        polled &&
        ica_poll_until(this_cpu(), &(struct ica_poll_watch){&server->pushed, server->taken,
                                                            or_result ? requests_or_results_waiting
                                                                      : requests_waiting});
    uint64_t handed = polled ? ica_request_poll_end(process) : 0;
    if (handed != 0) {
        server->taken++; /* the sender counted it in `pushed` */
        return (long)handed;
    }
    if (came && !process->kill_requested && process->direct_request == 0 &&
        atomic_load_acquire(&server->pushed) - server->taken == 1) {
        uint64_t id = take_the_one_pending(process, server, kernel_shared->core_count);
        if (id != NO_ICA)
            return (long)id;
    }
    return ica_receive_until(flags, wake_tick);
}

long sys_ica_receive(uint32_t flags, uint64_t timeout_ms)
{
    return ica_receive_until(flags, ica_receive_wake_tick(flags, timeout_ms));
}

long sys_ica_collect(uint32_t flags)
{
    return collect(NO_ICA, !(flags & ICA_NO_WAIT), NOT_PARKED);
}

long sys_ica_allocate(uint32_t kind, uint64_t bytes)
{
    struct intercore_message request = {
        .type = MESSAGE_ICA_ALLOCATE,
        .ica_allocate = {.pid = me()->pid, .kind = kind, .bytes = bytes},
    };
    struct intercore_message reply;
    if (kind > UINT32_MAX)
        return -E_INVALID;
    mkernel_request(&request, &reply);
    return reply.ica_allocate_reply.id;
}

long sys_ica_free(uint64_t id)
{
    struct ica *ica;
    long error = ica_held_by(me(), id, ica_kind(id), &ica);
    if (error != 0)
        return refused("free", id, error);
    if (ica->lend_count > 0)
        return -E_BUSY;
    if (ica->kind == ICA_KIND_CONTROL)
        ica_end_lends(me(), ica);
    ica_peel(me(), ica);
    ica->state = ICA_TRAVELLING;
    ica->destination = 0;
    struct intercore_message request = {.type = MESSAGE_ICA_FREE, .ica_free = {id}}, reply;
    mkernel_request(&request, &reply);
    return reply.ica_free_reply.result;
}

/* How many see `id` lent: asked by its holder, or by a borrower (a lend's
 * own count included; its lender may have ended); with
 * ICA_LENDS_BUT_MAPPINGS, not counting mapping lends. */
long sys_ica_lend_count(uint64_t id, uint32_t flags)
{
    if (flags & ~ICA_LENDS_BUT_MAPPINGS)
        return -E_INVALID;
    struct ica *ica;
    long error = ica_held_by(me(), id, ica_kind(id), &ica);
    if (error == -E_PERMISSION)
        error = ica_borrowed_by(me(), id, &ica);
    if (error == -E_SERVER_ENDED)
        error = 0; /* its lender ended: the count is still the ICA's */
    if (error != 0)
        return error;
    uint32_t mappings =
        (flags & ICA_LENDS_BUT_MAPPINGS) ? atomic_load_acquire(&ica->mapping_lend_count) : 0;
    uint32_t lends = atomic_load_acquire(&ica->lend_count);
    return lends > mappings ? (long)(lends - mappings) : 0;
}

long sys_ica_stats(uint64_t buffer)
{
    struct ica_pools *pools = kernel_shared->icas;
    struct ica_stats stats = {0};
    for (uint32_t i = 0; i < ICA_CONTROL_SLOTS; i++)
        stats.control_free += pools->control[i].state == ICA_FREE;
    for (uint32_t i = 0; i < ICA_DATA_SLOTS; i++)
        stats.data_free += pools->data[i].state == ICA_FREE;
    for (uint32_t i = 0; i < ICA_BLOCK_SLOTS; i++)
        stats.block_free += pools->block[i].state == ICA_FREE;
    stats.allocated_by_me = me()->icas_allocated;
    for (uint32_t core = 0; core < kernel_shared->core_count; core++) {
        stats.handovers += kernel_shared->cpus[core].ica_handovers;
        stats.ipis += kernel_shared->cpus[core].ipis_sent;
    }
    stats.frames_total = kernel_shared->frames_total;
    stats.frames_used = stats.frames_total - kernel_shared->frames_free;
    stats.process_slots = PROCESS_SLOTS;
    stats.table_frames = kernel_shared->table_frames;
    stats.ring_frames = kernel_shared->ring_frames;
    for (uint32_t i = 0; i < PROCESS_SLOTS; i++)
        stats.processes_used += kernel_shared->processes[i].state != PROCESS_FREE;
    return copy_to_user(buffer, &stats, sizeof(stats));
}

/* A server's reply and its next receive in one call (seL4's ReplyRecv): the
 * result goes back (a requester waiting on this core runs next, directly),
 * then the caller waits for its next request. A refused return is reported
 * as its error and nothing is received. */
long sys_ica_return_receive(uint64_t id, uint32_t flags, uint64_t timeout_ms)
{
    uint64_t wake_tick = ica_receive_wake_tick(flags, timeout_ms);
    long error = return_result(id, true);
    if (error != 0)
        return error;
    return ica_receive_until(flags, wake_tick);
}

/* A server's forward to the next stage and its next receive in one call. */
long sys_ica_forward_receive(uint32_t server, uint64_t control, uint32_t forward_flags,
                             uint32_t flags, uint64_t timeout_ms)
{
    if (forward_flags & ICA_FROM_KERNEL)
        return refused("forward", control, -E_INVALID);
    uint64_t wake_tick = ica_receive_wake_tick(flags, timeout_ms);
    uint64_t room_deadline = ica_receive_wake_tick(forward_flags, timeout_ms);
    long error = refused("forward", control,
                         send_to_server(server, control, forward_flags, true, true, room_deadline));
    if (error != 0)
        return error;
    return ica_receive_until(flags, wake_tick);
}
