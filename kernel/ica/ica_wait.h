/* ica_wait.h: the words a sender on another core and a waiting process
 * share (the rendezvous): where a blocked process is parked, a server's
 * polled_request word and a requester's polled_result word, each claimed
 * by one sender at a time and closed by the process before it ends. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "atomic.h"
#include "console.h"
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

/* The ending process's half, before it becomes a zombie (whose address
 * space the m-kernel then tears down): a sender's claim is waited out (it
 * pastes on its own core and publishes or gives up soon), then the word is
 * closed, so no sender claims it again. A request published meanwhile is
 * held by the process: the m-kernel answers it with the others it holds. */
static inline void ica_request_poll_close(struct process *process)
{
    bool waited = false;
    for (;;) {
        uint64_t word = atomic_load_acquire(&process->polled_request);
        if (word == ICA_REQUEST_POLL_CLAIMED) {
            waited = true;
            ica_claim_wait_turn();
        } else if (atomic_compare_swap(&process->polled_request, &word, ICA_REQUEST_POLL_CLOSED)) {
            if (waited)
                kprintf("ica: pid %u ending waited out a paste from another core (%s)\n",
                        process->pid,
                        word != 0 && word < ICA_REQUEST_POLL_CLOSED
                            ? "pasted: the m-kernel answers it"
                            : "given back: the request went to the ring");
            return;
        }
    }
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

/* The ending process's half, before it becomes a zombie: a sender's claim
 * is waited out, then the word is left 0, which no claim takes (a process
 * only polls for a result inside ica_poll_for_result, which takes its id
 * back before it returns: this is the same order made explicit). */
static inline void ica_result_poll_close(struct process *process)
{
    for (;;) {
        uint64_t word = atomic_load_acquire(&process->polled_result);
        if (word != ICA_RESULT_POLL_CLAIMED &&
            atomic_compare_swap(&process->polled_result, &word, 0))
            return;
        ica_claim_wait_turn();
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
