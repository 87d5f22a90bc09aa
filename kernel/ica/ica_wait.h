/* ica_wait.h: the wait protocol, the one owner of the words a waiting
 * process and its senders share (the rendezvous). Every write of them is
 * one of the transitions below; the fields are struct process's ica_waiting,
 * parked, parked_for, polled_request, polled_result, poll_handed_server,
 * direct_request and room_of_server, and struct cpu's polling and
 * poll_woken. "Sender" is the kernel of the process that sends (on another
 * core for the polled words); a claim is one compare-exchange, so one
 * sender at a time, and the owner waits out a claim before it ends.
 *
 * word (whose)           from              to                by, through
 * ---------------------- ----------------- ----------------- -----------------------------------
 * ica_waiting (process)  0                 1                 the process announcing a wait:
 *                                                            ica_wait_announce
 *                        1                 0                 one sender claiming the wake it then
 *                                                            delivers: ica_wake_claim(_if_waiting)
 *                        1                 0                 the process, its wait over:
 *                                                            ica_wait_over
 * parked, parked_for     NOWHERE           IN_RECEIVE/CALL   the process before it blocks: ica_park
 *                        IN_RECEIVE/CALL   NOWHERE           the process after it (ica_unpark), or
 *                                                            the sender of its core switching to it
 *                                                            (ica_park_leave)
 * polled_request         0                 ARMED             the server before its poll:
 *   (server)                                                 ica_request_poll_arm
 *                        ARMED             CLAIMED           a sender: ica_request_poll_claim
 *                        0                 CLAIMED           a sender, the server parked in its
 *                                                            receive: ica_request_park_claim
 *                        CLAIMED           ARMED / 0         that sender giving up:
 *                                                            ica_request_poll/park_release
 *                        CLAIMED           id                that sender, the request pasted:
 *                                                            ica_request_poll_publish
 *                        ARMED / id        0                 the server: its poll's end
 *                                                            (ica_request_poll_end), the id taken
 *                                                            (ica_request_take_pasted/_published)
 *                        not CLAIMED       CLOSED            the server ending: ica_wait_close
 * polled_result          0                 id                the requester before its poll:
 *   (requester)                                              ica_result_poll_arm
 *                        id                CLAIMED           a sender: ica_result_poll_claim
 *                        id                0                 a sender handing the result over
 *                                                            travelling: ica_hand_result_to_poller
 *                        CLAIMED           id                that sender giving up:
 *                                                            ica_result_poll_release
 *                        CLAIMED           PASTED            that sender, the result pasted:
 *                                                            ica_result_poll_pasted
 *                        CLAIMED           SERVER            that sender, a server's wake handed
 *                                                            (poll_handed_server written first):
 *                                                            ica_result_poll_hand_server
 *                        id/PASTED/SERVER  0                 the requester, its poll's end:
 *                                                            ica_result_poll_end
 *                        not CLAIMED       0                 the requester ending: ica_wait_close
 * polling (cpu)          0                 1, 1 -> 0         the core around its poll:
 *                                                            ica_core_poll_begin / _end
 * poll_woken (cpu)       0                 pid               a sender while the core polls:
 *                                                            ica_core_hand_wake
 *                        pid               0                 the core (ica_core_take_woken), or
 *                                                            that sender, the poll over meanwhile
 * direct_request         0                 id                a sender of the server's own core:
 *   (server)                                                 ica_direct_request_put
 *                        id                0                 the server's receive:
 *                                                            ica_direct_request_take
 * room_of_server         0                 pid, pid -> 0     the sender around its wait for room:
 *   (sender)                                                 ica_room_wait_begin / _end
 *
 * The transitions are pure: loads, stores and compare-exchanges on the
 * struct, no hardware but the wait turn (tests/unit/test_ica_wait.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "atomic.h"
#include "cpu.h"
#include "intercore.h"
#include "process.h"
#include "x86.h"

/* Where a process blocked for an ICA is parked (struct process.parked). */
enum ica_parked {
    PARKED_NOWHERE = 0,
    PARKED_IN_RECEIVE, /* a server in ica_receive (or a combined call's receive) */
    PARKED_IN_CALL,    /* a requester in a synchronous ica_request, for parked_for */
};

/* One turn of a wait for a sender on another core to end its claim of a
 * word of this core's process (it pastes on its own core, then publishes
 * or gives the word back): this core's inbox is served meanwhile, since
 * the sender may be waiting for room in it (a notification to the
 * m-kernel, when this is the m-kernel's core). */
static inline void ica_claim_wait_turn(void)
{
    intercore_poll();
    cpu_relax();
}

/* The wake flag. A sender that clears it owes the process one wake; a
 * cleared flag means "look again", never "block" (docs/ica.md). */
static inline void ica_wait_announce(struct process *process)
{
    atomic_store_fenced(&process->ica_waiting, 1); /* a full barrier (xchg) */
}

static inline void ica_wait_over(struct process *process)
{
    atomic_store_release(&process->ica_waiting, 0);
}

/* Whether nobody has cleared the flag since the process announced it. */
static inline bool ica_wait_still_announced(const struct process *process)
{
    return atomic_load_acquire(&process->ica_waiting) != 0;
}

/* The sender's half: true when this sender took the wake (it delivers it). */
static inline bool ica_wake_claim(struct process *target)
{
    return atomic_swap(&target->ica_waiting, 0) != 0;
}

/* ica_wake_claim after a plain look (no locked exchange when not waiting). */
static inline bool ica_wake_claim_if_waiting(struct process *target)
{
    return atomic_load_acquire(&target->ica_waiting) && atomic_swap(&target->ica_waiting, 0);
}

/* The park: where the process, blocked inside a system call, can be resumed
 * straight in user mode (ica_fastpath.c). parked_for is read only for
 * PARKED_IN_CALL (the result it waits for), so a receive's park leaves it
 * as it was (one store less a hop: `where` is a constant where it is inlined). */
static inline void ica_park(struct process *process, uint32_t where, uint64_t for_id)
{
    process->parked = where;
    if (where == PARKED_IN_CALL)
        process->parked_for = for_id;
}

static inline void ica_park_leave(struct process *process)
{
    process->parked = PARKED_NOWHERE;
}

/* The process's wait is over: not parked, its flag down. */
static inline void ica_unpark(struct process *process)
{
    ica_park_leave(process);
    ica_wait_over(process);
}

/* A server's polled_request word. */
/* polled_request's states besides 0 (not polling) and a handed id; no id
 * has these values (an id's kind byte is a small number). CLOSED: the
 * process is ending, and no sender may claim the word again. */
#define ICA_REQUEST_POLL_ARMED UINT64_MAX
#define ICA_REQUEST_POLL_CLAIMED (UINT64_MAX - 1)
#define ICA_REQUEST_POLL_CLOSED (UINT64_MAX - 2)

/* The server announces, before its poll, that a request may be pasted
 * into it (a full barrier: senders that see it also see it polling).
 * False when the word is not 0: a sender that found the server parked has
 * claimed it, or published a request there, which the receive takes once
 * it is counted (the word is left as it is). */
static inline bool ica_request_poll_arm(struct process *server)
{
    uint64_t expected = 0;
    return atomic_compare_swap(&server->polled_request, &expected, ICA_REQUEST_POLL_ARMED);
}

/* The server's end of its poll: the id a sender pasted into it, or 0 when
 * none did (no sender can from now on). A sender that claimed it is
 * waited for: it pastes on its own core and gives up or publishes soon. */
static inline uint64_t ica_request_poll_end(struct process *server)
{
    for (;;) {
        uint64_t expected = ICA_REQUEST_POLL_ARMED;
        if (atomic_compare_swap(&server->polled_request, &expected, 0))
            return 0;
        if (expected != ICA_REQUEST_POLL_CLAIMED) {
            atomic_store_release(&server->polled_request, 0);
            return expected;
        }
        ica_claim_wait_turn();
    }
}

/* The sender's half: true when `server` polls for a request and this
 * sender now may paste one into it (it then publishes the id, or gives
 * the claim back with ica_request_poll_release). */
static inline bool ica_request_poll_claim(struct process *server)
{
    uint64_t expected = ICA_REQUEST_POLL_ARMED;
    return atomic_load_acquire(&server->polled_request) == ICA_REQUEST_POLL_ARMED &&
           atomic_compare_swap(&server->polled_request, &expected, ICA_REQUEST_POLL_CLAIMED);
}

static inline void ica_request_poll_release(struct process *server)
{
    atomic_store_release(&server->polled_request, ICA_REQUEST_POLL_ARMED);
}

static inline void ica_request_poll_publish(struct process *server, uint64_t id)
{
    atomic_store_release(&server->polled_request, id);
}

/* The sender's half for a server parked in its receive: true when the
 * word is 0 (nothing published, no poll, not closed) and this sender now
 * may paste a request into it (it then publishes the id, or gives the
 * claim back with ica_request_park_release). */
static inline bool ica_request_park_claim(struct process *server)
{
    uint64_t expected = 0;
    return atomic_load_acquire(&server->polled_request) == 0 &&
           atomic_compare_swap(&server->polled_request, &expected, ICA_REQUEST_POLL_CLAIMED);
}

static inline void ica_request_park_release(struct process *server)
{
    atomic_store_release(&server->polled_request, 0);
}

/* The request a sender on another core pasted into `server` while it was
 * parked in its receive (the sender claimed its wake, published the id
 * here, then counted the request in `pushed`: a request counted is always
 * there to take): the id, taken, or 0. */
static inline uint64_t ica_request_take_pasted(struct process *server)
{
    uint64_t id = atomic_load_acquire(&server->polled_request);
    if (id == 0 || id >= ICA_REQUEST_POLL_CLOSED) /* the states: the three highest values */
        return 0;
    atomic_store_release(&server->polled_request, 0);
    return id;
}

/* The request `id` published in `server`'s word, taken: false when the
 * word holds anything else. */
static inline bool ica_request_take_published(struct process *server, uint64_t id)
{
    if (atomic_load_acquire(&server->polled_request) != id)
        return false;
    atomic_store_release(&server->polled_request, 0);
    return true;
}

/* A requester's polled_result word. */
/* polled_result while a sender pastes the result into the poller, and
 * once it has; no id has these values (an id's kind byte is small). */
#define ICA_RESULT_POLL_CLAIMED (UINT64_MAX - 1)
#define ICA_RESULT_POLL_PASTED (UINT64_MAX - 2)
/* polled_result once a sender on another core has pasted a request into a
 * server parked on the poller's core and handed the poller that server's
 * wake (its pid in poll_handed_server): the poll ends with
 * ICA_RESULT_SERVER_WOKEN. */
#define ICA_RESULT_POLL_SERVER (UINT64_MAX - 3)

/* The sender's half of a paste into the poller: true when `target` polls
 * for `id` and this sender now may paste it (it then calls
 * ica_result_poll_pasted, or gives the claim back with
 * ica_result_poll_release). */
static inline bool ica_result_poll_claim(struct process *target, uint64_t id)
{
    uint64_t expected = id;
    return atomic_load_acquire(&target->polled_result) == id &&
           atomic_compare_swap(&target->polled_result, &expected, ICA_RESULT_POLL_CLAIMED);
}

static inline void ica_result_poll_release(struct process *target, uint64_t id)
{
    atomic_store_release(&target->polled_result, id);
}

static inline void ica_result_poll_pasted(struct process *target)
{
    atomic_store_release(&target->polled_result, ICA_RESULT_POLL_PASTED);
}

/* What a poll for a result ended with: nothing handed over (nothing came
 * within the bound, the core has something else to run, a result came as a
 * message, or the caller is being killed: the caller looks at its result
 * ring and waits the ordinary way, and no sender can hand `id` over any
 * more), the result travelling to the caller for it to paste
 * (ica_hand_result_to_poller), pasted into it by the sender already
 * (ica_result_poll_claim), or still to come from a server of the caller's
 * core that the sender pasted the request into and whose wake it handed to
 * the caller (ica_result_poll_hand_server: the caller hands that server the
 * core, or runs it at once). */
enum ica_polled_result {
    ICA_RESULT_NOT_HANDED,
    ICA_RESULT_TRAVELLING,
    ICA_RESULT_PASTED,
    ICA_RESULT_SERVER_WOKEN /* the result is still to come; the caller owes the wake of the
                               server in its poll_handed_server (ICA_RESULT_POLL_SERVER) */
};

/* The requester's half: it polls for `id` from now on (a full barrier:
 * a sender that sees the word also sees it polling). */
static inline void ica_result_poll_arm(struct process *process, uint64_t id)
{
    atomic_store_fenced(&process->polled_result, id);
}

/* The requester's end of its poll: the id taken back unless a sender took
 * it first, and then what that sender did (a sender pasting it is waited
 * for: it finishes on its own core). */
static inline enum ica_polled_result ica_result_poll_end(struct process *process, uint64_t id)
{
    for (;;) {
        uint64_t expected = id;
        if (atomic_compare_swap(&process->polled_result, &expected, 0))
            return ICA_RESULT_NOT_HANDED;
        if (expected == 0)
            return ICA_RESULT_TRAVELLING;
        if (expected == ICA_RESULT_POLL_PASTED) {
            atomic_store_release(&process->polled_result, 0);
            return ICA_RESULT_PASTED;
        }
        if (expected == ICA_RESULT_POLL_SERVER) {
            atomic_store_release(&process->polled_result, 0);
            return ICA_RESULT_SERVER_WOKEN;
        }
        ica_claim_wait_turn(); /* ICA_RESULT_POLL_CLAIMED */
    }
}

/* The sender's half of a wake handed to a poller: the server `server_pid`,
 * parked on `poller`'s core and owed a wake by this sender (the request
 * pasted into it and published), is woken by `poller`, which polls for
 * `id`. Written under the claim of the poller's polled_result word, so
 * into a process that has not closed it (it is not ending); the poll's
 * end, which always comes before the close, takes the wake. False when
 * the poller does not poll for `id` (any more): the wake goes the other
 * way. */
static inline bool ica_result_poll_hand_server(struct process *poller, uint64_t id,
                                               uint32_t server_pid)
{
    if (!ica_result_poll_claim(poller, id))
        return false;
    poller->poll_handed_server = server_pid;
    atomic_store_release(&poller->polled_result, ICA_RESULT_POLL_SERVER);
    return true;
}

/* The sender's half: true when `target` polls for `id` and now has it
 * (its result must then not be sent as a message too). */
static inline bool ica_hand_result_to_poller(struct process *target, uint64_t id)
{
    uint64_t expected = id;
    return atomic_load_acquire(&target->polled_result) == id &&
           atomic_compare_swap(&target->polled_result, &expected, 0);
}

/* The core's poll words. While `polling` is up a sender on another core
 * may hand a wake to the core's poll_woken word instead of a message. */
static inline void ica_core_poll_begin(struct cpu *cpu)
{
    atomic_store_fenced(&cpu->polling, 1);
}

static inline void ica_core_poll_end(struct cpu *cpu)
{
    atomic_store_fenced(&cpu->polling, 0);
}

/* The sender's half of a wake across cores: true when `cpu` polls and has
 * taken the wake of `pid` into its poll_woken word (it makes the process
 * ready at its next turn, or when its poll ends); false when the wake must
 * go as a message. The caller has claimed the wake (ica_wake_claim). */
bool ica_core_hand_wake(struct cpu *cpu, uint32_t pid);

/* The core's half: the process a sender woke through poll_woken (0: none). */
static inline uint32_t ica_core_take_woken(struct cpu *cpu)
{
    return atomic_swap(&cpu->poll_woken, 0);
}

/* A request a sender of this core hands straight to `server`, and the
 * server's take of it (0: none). */
static inline void ica_direct_request_put(struct process *server, uint64_t id)
{
    server->direct_request = id;
}

static inline uint64_t ica_direct_request_take(struct process *server)
{
    uint64_t id = server->direct_request;
    server->direct_request = 0;
    return id;
}

/* The sender waits for room in `server_pid`'s ring (`ps` shows it). */
static inline void ica_room_wait_begin(struct process *sender, uint32_t server_pid)
{
    sender->room_of_server = server_pid;
}

static inline void ica_room_wait_end(struct process *sender)
{
    sender->room_of_server = 0;
}

/* The ending process's half, before it becomes a zombie (whose address
 * space the m-kernel then tears down): a sender's claim of either word is
 * waited out, then polled_request is closed (no sender claims it again; a
 * request published meanwhile is held by the process, and the m-kernel
 * answers it with the others it holds) and polled_result left 0, which no
 * claim takes (a process polls for a result only between
 * ica_result_poll_arm and ica_result_poll_end, inside a system call). */
void ica_wait_close(struct process *process);
