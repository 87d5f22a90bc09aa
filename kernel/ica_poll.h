/* ica_poll.h: a process about to wait for an ICA on a core with nothing else
 * to run polls for it first, for a bounded time, instead of halting and being
 * woken by a message and an IPI (docs/design.md, "Cheap cross-core requests"). */
#pragma once
#include <stdbool.h>

/* How long a wait polls before it blocks, in microseconds: less than a
 * halt, IPI and wake cost on hardware, and chosen by measurement under
 * icount, where every turn of the poll is counted (docs/profiling.md). */
#define ICA_POLL_MICROSECONDS 20

/* Polls `ready` while the caller has not announced its wait (a sender on
 * another core then sends no wake message), serving this core's inboxes as
 * messages come in (a cross-core result arrives as one). True as soon as
 * `ready` holds or the caller is being killed; false when the core has
 * something else to run or the bound passed: the caller then waits the
 * ordinary way. */
bool ica_poll_before_wait(bool (*ready)(void));
