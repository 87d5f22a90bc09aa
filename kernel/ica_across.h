/* ica_across.h: the sender's half of the one-pass handover to a process on
 * another core (docs/ica.md, "Across cores"): checked and peeled once,
 * pushed into the receiver's ring or handed to its poll. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "cpu.h"
#include "ica_handover.h"
#include "process.h"

/* A request (forward false) or a forward (forward_flags: ICA_RETURN_VIA_ME
 * or 0) of the running process's control ICA `id` to server `server_pid`
 * on another core. False, with nothing changed, when the one pass does not
 * apply (the server is here or gone, the ring is crowded, anything the
 * general call refuses): the general call runs. */
bool ica_across_send(uint32_t server_pid, uint64_t id, uint32_t forward_flags, bool forward);

/* ica_across_return once the control ICA (held by the running server)
 * and its requester, alive on another core, are known. */
bool ica_across_return_to(struct ica *control, struct process *requester, uint64_t id);

/* A server's result `id` to a requester on another core: handed to its
 * poll by one exchange, else sent as a message. False, with nothing
 * changed, when the one pass does not apply. Its first looks (the ICA
 * held, the requester's core) are inline: a same-core return that the fast
 * path could not take pays only them. */
static inline bool ica_across_return(uint64_t id)
{
    struct process *server = this_cpu()->current;
    struct ica *control;
    if (ica_held_by(server, id, ICA_KIND_CONTROL, &control) != 0)
        return false;
    uint32_t depth = control->return_depth;
    if (depth == 0 || depth > ICA_MAX_RETURNS)
        return false;
    struct process *requester = process_find(control->returns[depth - 1]);
    if (requester == NULL || requester->core == this_cpu()->index ||
        requester->state == PROCESS_ZOMBIE)
        return false;
    return ica_across_return_to(control, requester, id);
}
