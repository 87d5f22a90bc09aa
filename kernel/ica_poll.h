/* ica_poll.h: a process about to wait for an ICA on a core with nothing else
 * to run polls for it first, for a bounded time, instead of halting and being
 * woken by a message and an IPI (docs/design.md, "Cheap cross-core requests"). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "atomic.h"
#include "process.h"

/* How long a wait polls before it blocks, in microseconds: less than a
 * halt, IPI and wake cost on hardware, and chosen by measurement under
 * icount, where every turn of the poll is counted (docs/profiling.md). The
 * kernel option ica_poll_us=N sets another bound; 0 turns the poll off
 * (every wait announces itself and halts at once, as without it). */
#define ICA_POLL_MICROSECONDS 5

/* Polls `ready` while the caller has not announced its wait (a sender on
 * another core then sends no wake message), serving this core's inboxes as
 * messages come in (a cross-core result arrives as one). True as soon as
 * `ready` holds or the caller is being killed; false when the core has
 * something else to run or the bound passed: the caller then waits the
 * ordinary way. */
bool ica_poll_before_wait(bool (*ready)(void));

/* ica_poll_before_wait for a server's receive: it also watches the count
 * of requests pushed into `server`'s rings (one load a turn). */
struct server_entry;
bool ica_poll_for_request(const struct server_entry *server, bool (*ready)(void));

/* Polls, as ica_poll_before_wait, for the result `id` of the caller's own
 * synchronous request, which a sender on another core may hand over by
 * ica_hand_result_to_poller. True when it did: the result is travelling to
 * the caller, for it to paste. False otherwise (nothing came within the
 * bound, the core has something else to run, a result came as a message,
 * or the caller is being killed): the caller looks at its result ring and
 * waits the ordinary way, and no sender can hand `id` over any more. */
bool ica_poll_for_result(uint64_t id, bool (*ready)(void));

/* The sender's half: true when `target` polls for `id` and now has it
 * (its result must then not be sent as a message too). */
static inline bool ica_hand_result_to_poller(struct process *target, uint64_t id)
{
    uint64_t expected = id;
    return atomic_load_acquire(&target->polled_result) == id &&
           atomic_compare_swap(&target->polled_result, &expected, 0);
}

/* The sender's half of a wake across cores: true when `target`'s core
 * polls and has taken the wake into its poll_woken word (it makes the
 * target ready at its next turn, or when its poll ends); false when the
 * wake must go as a message. The caller has claimed the wake (cleared the
 * target's ica_waiting). */
bool ica_poll_hand_wake(struct process *target);
