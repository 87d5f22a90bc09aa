/* ica_across.h: the sender's half of the one-pass handover to a process on
 * another core (docs/ica.md, "Across cores"): checked and peeled once,
 * pushed into the receiver's ring or handed to its poll. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "ica.h"
#include "ica_poll.h"
#include "intercore.h"
#include "process.h"
#include "scheduler.h"

/* A request (forward false) or a forward (forward_flags: ICA_RETURN_VIA_ME
 * or 0) of the running process's control ICA `id` to server `server_pid`
 * on another core. False, with nothing changed, when the one pass does not
 * apply (the server is here or gone, the ring is crowded, anything the
 * general call refuses): the general call runs. */
bool ica_across_send(uint32_t server_pid, uint64_t id, uint32_t forward_flags, bool forward);

/* A server's result: the control ICA (held by the running server, its
 * return route checked) to `requester`, alive on another core, handed to
 * its poll by one exchange, else sent as a message. False, with nothing
 * changed, when the one pass does not apply (what it lends does not check
 * out): the general call runs. The fast path finds the requester while it
 * looks for one parked on this core. */
bool ica_across_return_to(struct ica *control, struct process *requester, uint64_t id);
