/* ica_across.c: the sender's half of the one-pass handover across cores.
 * A request, forward or result whose receiver lives on another core is
 * checked and peeled once by the sender's kernel and pushed into the
 * receiver's ring (or handed to its poll), without the general call's
 * second round of lookups; the receiving core only pastes it. A case it
 * does not cover returns false before anything changed and goes the
 * general way (ica_syscalls.c). */
#include "ica_across.h"
#include "ica_wait.h"
#include "atomic.h"
#include "cpu.h"
#include "fault_injection.h"
#include "ica.h"
#include "ica_handover.h"
#include "ica_poll.h"
#include "ica_room.h"
#include "ica_syscalls.h"
#include "intercore.h"
#include "mkernel_client.h"
#include "scheduler.h"
#include "shared.h"
#include "x86.h"
#include <formica/rights.h>

/* The process `pid` when it is alive on another core than this one. */
static inline struct process *living_elsewhere(uint32_t pid)
{
    struct process *process = process_find(pid);
    if (process == NULL || process->core == this_cpu()->index || process->state == PROCESS_ZOMBIE)
        return NULL;
    return process;
}

/* What the control ICA `control`, held by `sender`, carries and lends,
 * when it checks out: true, with its entry in the sender in *entry. */
static inline bool control_movable(struct process *sender, struct ica *control,
                                   struct attachments *with, uint64_t **entry)
{
    if (ica_read_attachments(sender, control, with) != 0)
        return false;
    *entry = ica_control_leaf_entry(sender, control->index);
    return *entry != NULL;
}

/* The control ICA `id` when `sender` holds it and what it carries and
 * lends checks out: its entry in the sender goes into *entry. */
static inline struct ica *control_to_send(struct process *sender, uint64_t id,
                                          struct attachments *with, uint64_t **entry)
{
    struct ica *control;
    if (ica_held_by(sender, id, ICA_KIND_CONTROL, &control) != 0 ||
        !control_movable(sender, control, with, entry))
        return NULL;
    return control;
}

/* The control ICA leaves the sender for `destination`: lends changed, the
 * data ICAs peeled, the sender's stamp, its one entry cleared here (the
 * sender runs on this core), then travelling (released last: the
 * receiver's check). */
static inline __attribute__((always_inline)) void
depart(struct process *sender, struct ica *control, const struct attachments *with, uint64_t *entry,
       uint32_t destination, uint32_t delivery)
{
    ica_depart_begin(sender, control, with, destination, delivery);
    control->destination = destination;
    *entry = 0;
    invlpg(ica_virtual_address(control));
    atomic_store_release(&control->owner, 0);
    atomic_store_release(&control->state, ICA_TRAVELLING);
}

/* The entries a paste into `server` writes, when all are remembered there:
 * the control ICA's in *to_entry, each lent one-page ICA's in lent_entries. */
static inline bool server_entries_ready(struct process *server, const struct ica *control,
                                        const struct attachments *with, uint64_t **to_entry,
                                        uint64_t **lent_entries)
{
    *to_entry = ica_control_leaf_entry(server, control->index);
    if (*to_entry == NULL)
        return false;
    for (uint32_t i = 0; i < with->lent_count; i++) {
        const struct ica *lent = with->lent[i];
        lent_entries[i] = lent->pages == 1 ? ica_window_entry(server, lent) : NULL;
        if (lent_entries[i] == NULL)
            return false;
    }
    return true;
}

/* The control ICA leaves the sender straight into `receiver` (polling on
 * another core, claimed): lends changed, the sender's stamp, its entry
 * moved, the lent ICAs mapped read-only, the arrival written into its page,
 * as the same-core handover does. */
static inline __attribute__((always_inline)) void
paste_into(struct process *sender, struct process *receiver, struct ica *control,
           const struct attachments *with, uint64_t *entry, uint64_t *to_entry,
           uint64_t *const *lent_entries, uint32_t delivery)
{
    ica_change_lends(sender, control, with);
    control->attached_count = 0;
    ica_stamp_sender(control, sender, delivery);
    control->destination = receiver->pid;
    ica_move_entry(control, entry, to_entry, receiver);
    invlpg(ica_virtual_address(control));
    for (uint32_t i = 0; i < with->lent_count; i++)
        ica_lend_entry_into(lent_entries[i], with->lent[i]);
    ica_write_arrival(control, NULL);
    if (delivery == ICA_AS_REQUEST) /* ica_note_client; a plain store, read by its core alone */
        receiver->serving_account = control->sender_account;
}

/* A receiver this sender has claimed (its polled_request or polled_result
 * word) is alive until the claim ends: it closes the word before it ends
 * (scheduler_exit_current), and the m-kernel tears down only an ended
 * process. The claim holds the process slot, not the process: the slot
 * must still hold `pid`, the one looked up (a slot freed and given to a
 * new process meanwhile does not; pids are not reused). Then it is the
 * same process throughout, alive since the look-up, so a server is still
 * registered in the slot the look-up found (only its end unregisters it).
 * A plain load: the compiler reuses it for the paste's own reads. */
static inline bool still_the_one_looked_up(const struct process *claimed, uint32_t pid)
{
    return claimed->pid == pid;
}

/* A result for `requester` (`requester_pid`), which polls for it on its
 * own core: pasted into it here (paste_into). False, with nothing changed,
 * when it does not poll for it, is not that process any more, or an entry
 * is not remembered there. */
static bool hand_result_pasted(struct process *server, struct process *requester,
                               uint32_t requester_pid, struct ica *control,
                               const struct attachments *with, uint64_t *entry, uint64_t id)
{
    if (with->data_count != 0 || !ica_result_poll_claim(requester, id))
        return false;
    uint64_t *to_entry, *lent_entries[ICA_MAX_ATTACHED];
    if (!still_the_one_looked_up(requester, requester_pid) ||
        !server_entries_ready(requester, control, with, &to_entry, lent_entries)) {
        ica_result_poll_release(requester, id);
        return false;
    }
    paste_into(server, requester, control, with, entry, to_entry, lent_entries, ICA_AS_RESULT);
    ica_result_poll_pasted(requester);
    return true;
}

/* Whether `server`, whose word this sender claimed, may not be handed the
 * request now: not the process looked up any more, something older pending
 * for it, a direct request, or an entry the paste needs not remembered
 * there (else they are in *to_entry and lent_entries). */
static inline __attribute__((always_inline)) bool
claimed_server_refuses(struct process *server, uint32_t server_pid,
                       struct server_entry *entry_of_server, struct ica *control,
                       const struct attachments *with, uint64_t **to_entry, uint64_t **lent_entries)
{
    return !still_the_one_looked_up(server, server_pid) ||
           atomic_load_acquire(&entry_of_server->pushed) !=
               __atomic_load_n(&entry_of_server->taken, __ATOMIC_RELAXED) ||
           server->direct_request != 0 ||
           !server_entries_ready(server, control, with, to_entry, lent_entries);
}

/* A request for `server` (`server_pid`), which polls for one on its own
 * core with nothing older pending: pasted into it here, as the same-core
 * handover does (its entries written, the lends mapped, the arrival
 * written), and its id published for the poll to return. False, with
 * nothing changed, when the server does not poll, is not registered as
 * `server_pid` any more, something waits before it, or an entry is not
 * remembered there: the request goes through the ring. */
static bool hand_to_polling_server(struct process *sender, struct process *server,
                                   uint32_t server_pid, struct server_entry *entry_of_server,
                                   struct ica *control, const struct attachments *with,
                                   uint64_t *entry, uint64_t id)
{
    if (with->data_count != 0 || !ica_request_poll_claim(server))
        return false;
    uint64_t *to_entry, *lent_entries[ICA_MAX_ATTACHED];
    if (claimed_server_refuses(server, server_pid, entry_of_server, control, with, &to_entry,
                               lent_entries)) {
        ica_request_poll_release(server);
        return false;
    }
    paste_into(sender, server, control, with, entry, to_entry, lent_entries, ICA_AS_REQUEST);
    atomic_add(&entry_of_server->pushed, 1); /* taken by the server's poll */
    ica_request_poll_publish(server, id);
    return true;
}

/* The process running on `server`'s core: when it polls there for the
 * result of the request handed to `server` (a request forwarded without
 * ICA_RETURN_VIA_ME), it wakes the server itself. Read without a lock: a
 * slot's memory stays, and the claim of its polled_result word (only the
 * requester polls for that id, which the forwarder holds meanwhile)
 * decides. */
static inline struct process *running_beside(const struct process *server)
{
    struct process *running =
        __atomic_load_n(&kernel_shared->cpus[server->core].current, __ATOMIC_ACQUIRE);
    return running != NULL && running->core == server->core ? running : NULL;
}

/* A request for `server` (`server_pid`), parked in its receive on its own
 * core (blocked, or about to) with nothing older pending: its
 * polled_request word claimed, then its wake, the request pasted into it
 * here (paste_into), published in the word, which its receive takes first,
 * and then counted in `pushed`; then woken: by the requester of the result
 * when it polls for it on the server's core (its polled_result word
 * claimed, ica_result_poll_hand_server, which ends its poll), else through
 * the core's poll or a message (ica_wake_across). False, with nothing
 * changed, otherwise: the request goes through the ring. */
static bool hand_to_parked_server(struct process *sender, struct process *server,
                                  uint32_t server_pid, struct server_entry *entry_of_server,
                                  struct ica *control, const struct attachments *with,
                                  uint64_t *entry, uint64_t id)
{
    if (with->data_count != 0 || server->parked != PARKED_IN_RECEIVE ||
        !ica_wait_still_announced(server) || !ica_request_park_claim(server))
        return false;
    uint64_t *to_entry, *lent_entries[ICA_MAX_ATTACHED];
    if (claimed_server_refuses(server, server_pid, entry_of_server, control, with, &to_entry,
                               lent_entries) ||
        !ica_wake_claim(server)) {
        ica_request_park_release(server);
        return false;
    }
    fault_injection_widen_ica_paste();
    paste_into(sender, server, control, with, entry, to_entry, lent_entries, ICA_AS_REQUEST);
    /* the id before the count: whoever sees the count finds the request
     * (receive_armed takes a count with nothing behind it for a stale one) */
    ica_request_poll_publish(server, id);
    atomic_add(&entry_of_server->pushed, 1);
    struct process *poller = running_beside(server);
    if (poller == NULL || !ica_result_poll_hand_server(poller, id, server_pid))
        ica_wake_across(server);
    return true;
}

/* The server ended between the look-up and the push (see
 * report_if_undelivered in ica_syscalls.c): the m-kernel answers it. */
static void report_undelivered(uint64_t id)
{
    struct intercore_message message = {.type = MESSAGE_ICA_UNDELIVERED, .ica_undelivered = {id}};
    mkernel_notify(&message);
}

/* The request into `server`'s ring for this core, noted and counted, and
 * the server woken if it waits: false, with nothing changed, when that
 * ring is crowded. Apart: a polling or parked server is handed its request
 * without a ring. */
static __attribute__((noinline)) bool
push_into_ring(struct process *sender, struct process *target, uint32_t server_pid,
               struct server_entry *server, struct ica *control, const struct attachments *with,
               uint64_t *entry, uint64_t id)
{
    bool lane = sender->account == INIT_PID;
    uint32_t core = this_cpu()->index;
    struct ring *ring = lane ? server_lane(server, core) : server_ring(server, core);
    if (ica_ring_crowded(ring))
        return false;
    depart(sender, control, with, entry, server_pid, ICA_AS_REQUEST);
    ring_push_u64(ring, id); /* not crowded: room for it */
    server_note_push(server, lane, core);
    if (lane)
        atomic_add(&server->lane_pushed, 1); /* seen before `pushed` */
    atomic_add(&server->pushed, 1);          /* a locked add: a full barrier */
    if (atomic_load_acquire(&server->pid) != server_pid)
        report_undelivered(id);
    if (ica_wake_claim_if_waiting(target))
        ica_wake_across(target);
    return true;
}

bool ica_across_send(uint32_t server_pid, uint64_t id, uint32_t forward_flags, bool forward)
{
    struct process *sender = this_cpu()->current;
    struct process *target = living_elsewhere(server_pid);
    struct server_entry *server = target != NULL ? server_of_process(target) : NULL;
    struct attachments with;
    uint64_t *entry;
    struct ica *control = server != NULL ? control_to_send(sender, id, &with, &entry) : NULL;
    if (control == NULL)
        return false;
    bool via_me = forward_flags & ICA_RETURN_VIA_ME;
    if (forward && (control->delivery != ICA_AS_REQUEST ||
                    (via_me && control->return_depth >= ICA_MAX_RETURNS)))
        return false;
    if (!forward)
        ica_route_start(control, sender->pid);
    else if (via_me)
        ica_route_push(control, sender->pid);
    /* handed over only when nothing is pending, so no ring is crowded */
    if (hand_to_polling_server(sender, target, server_pid, server, control, &with, entry, id) ||
        hand_to_parked_server(sender, target, server_pid, server, control, &with, entry, id))
        return true;
    if (push_into_ring(sender, target, server_pid, server, control, &with, entry, id))
        return true;
    if (via_me)
        ica_route_pop(control); /* the route as it was (a started one the general
                                   call starts again): it waits for room */
    return false;
}

bool ica_across_return_to(struct ica *control, struct process *requester, uint64_t id)
{
    struct process *server = this_cpu()->current;
    struct attachments with;
    uint64_t *entry;
    if (!control_movable(server, control, &with, &entry))
        return false;
    uint32_t requester_pid = ica_route_pop(control);
    if (hand_result_pasted(server, requester, requester_pid, control, &with, entry, id))
        return true;
    depart(server, control, &with, entry, requester_pid, ICA_AS_RESULT);
    if (!ica_hand_result_to_poller(requester, id))
        ica_deliver_result(requester_pid, id); /* it waits or does other work: a message */
    return true;
}
