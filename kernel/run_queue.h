/* run_queue.h: a core's ready processes. Servers wait in one FIFO (the
 * project's one ring, slot numbers of the process table) and run before any
 * application; applications wait in a queue fair between accounts
 * (fair_queue.h). Only the owning core touches its queue. Pure logic,
 * tested on the host. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "fair_queue.h"
#include "ring.h"

#define RUN_QUEUE_CAPACITY 256 /* = PROCESS_SLOTS: every process fits */
#define RUN_QUEUE_LEVELS 2     /* = PRIORITY_LEVELS: 0 servers, 1 applications */
#define RUN_QUEUE_SERVERS 0
#define RUN_QUEUE_APPLICATIONS 1
#define RUN_QUEUE_EMPTY UINT32_MAX
_Static_assert(RING_CAPACITY_VALID(RUN_QUEUE_CAPACITY), "RUN_QUEUE_CAPACITY is a ring capacity");
_Static_assert(FAIR_QUEUE_SLOTS == RUN_QUEUE_CAPACITY, "every application fits");
_Static_assert(FAIR_QUEUE_EMPTY == RUN_QUEUE_EMPTY, "one answer for an empty level");

struct run_queue {
    uint32_t ready_levels; /* bit L set: level L holds a ready process */
    struct {
        struct ring ring;
        uint32_t storage[RUN_QUEUE_CAPACITY];
    } servers;
    struct fair_queue applications;
};
_Static_assert(RUN_QUEUE_LEVELS <= 32, "ready_levels has a bit per level");

/* `credit`: how far (TSC cycles) below the least-used competing account an
 * account that comes back after waiting starts (fair_queue_init). */
void run_queue_init(struct run_queue *queue, uint64_t credit);
/* Appends `slot` at `priority`; an application's `account` (not 0) and the
 * account whose application has the core (`running`, 0: none) place it
 * among the accounts. False for a bad priority or a full level. */
bool run_queue_push(struct run_queue *queue, uint32_t slot, uint32_t priority, uint32_t account,
                    uint32_t running);
/* Removes and returns the next slot of the most urgent non-empty level:
 * the oldest server, else the least-used account's oldest application. */
uint32_t run_queue_pop(struct run_queue *queue);
/* Most urgent level with a ready process, or RUN_QUEUE_LEVELS when none. */
uint32_t run_queue_best_priority(const struct run_queue *queue);
/* Whether a process more urgent than `priority` is ready (inline: the ICA
 * fast path asks it at every handover). */
static inline bool run_queue_has_more_urgent(const struct run_queue *queue, uint32_t priority)
{
    uint32_t ready = queue->ready_levels; /* usually 0 on the fast path: one test */
    return ready != 0 && (uint32_t)__builtin_ctz(ready) < priority;
}
