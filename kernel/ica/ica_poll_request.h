/* ica_poll_request.h: a server polling for its next request on a core of
 * its own, or parked in its receive, is handed a request by the sender's
 * kernel already pasted (the one-pass handover across cores), instead of
 * through its ring. Every paste happens under a claim of the server's
 * polled_request word, which the server closes before it ends. */
#pragma once
#include <stdint.h>
#include "atomic.h"
#include "console.h"
#include "ica_poll.h"
#include "process.h"
#include "x86.h"

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
