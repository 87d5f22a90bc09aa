/* ica_poll_request.h: a server polling for its next request on a core of
 * its own, or parked in its receive, is handed a request by the sender's
 * kernel already pasted (the one-pass handover across cores), instead of
 * through its ring. */
#pragma once
#include <stdint.h>
#include "atomic.h"
#include "process.h"
#include "x86.h"

/* polled_request's states besides 0 (not polling) and a handed id; no id
 * has these values (an id's kind byte is a small number). */
#define ICA_REQUEST_POLL_ARMED UINT64_MAX
#define ICA_REQUEST_POLL_CLAIMED (UINT64_MAX - 1)

/* The server announces, before its poll, that a request may be pasted
 * into it (a full barrier: senders that see it also see it polling).
 * False when the word is not 0: a sender that found the server parked has
 * published a request there, which the receive takes once it is counted
 * (the word is left as it is). */
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
        cpu_relax();
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

/* The request a sender on another core pasted into `server` while it was
 * parked in its receive (the sender claimed its wake, published the id
 * here, then counted the request in `pushed`: a request counted is always
 * there to take): the id, taken, or 0. */
static inline uint64_t ica_request_take_pasted(struct process *server)
{
    uint64_t id = atomic_load_acquire(&server->polled_request);
    if (id == 0 || id == ICA_REQUEST_POLL_ARMED || id == ICA_REQUEST_POLL_CLAIMED)
        return 0;
    atomic_store_release(&server->polled_request, 0);
    return id;
}
