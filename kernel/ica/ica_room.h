/* ica_room.h: back-pressure on a server's request rings. A sender whose
 * ring on its core is full, or whose quota account already holds its share
 * of it, waits for room instead of failing (docs/ica.md, "Back-pressure"). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "atomic.h"
#include "ica.h"
#include "ring.h"

/* Entries one quota account may hold in one server's ring on one core. */
#define ICA_RING_SHARE (ICA_RING_SLOTS / 2)

/* Whether a send into `ring` must look closer (ica_room_wait): only once
 * the ring holds a share, so the common path is one comparison. */
static inline bool ica_ring_crowded(const struct ring *ring)
{
    return ring_count(ring) >= ICA_RING_SHARE;
}

/* Waits until `ring` (server `server_pid`'s ring for this core) has room
 * for one more request of the caller's account: 0. -E_BUSY without `wait`
 * or once this core's tick reaches `wake_tick` (0: no limit); -E_NOT_FOUND
 * when the server ended meanwhile. A killed caller ends here. */
long ica_room_wait(struct server_entry *server, uint32_t server_pid, struct ring *ring, bool wait,
                   uint64_t wake_tick);

/* Wakes the senders on `core` waiting for room in `server_pid`'s ring there,
 * if any announced a wait (a message to that core, or a wake here). */
void ica_room_announce(struct server_entry *server, uint32_t core, uint32_t server_pid);

/* The room is announced once the ring has drained to this: then every
 * account has room in it (fewer than a share of entries, the ring not
 * full), and one wake lets each waiter push several requests, not one. */
#define ICA_RING_ROOM_MARK (ICA_RING_SHARE / 2)

/* After the server took a request from `ring`, its ring (or lane) for
 * `core`: one load when nobody waits. The load is not fenced after the take:
 * a waiter whose bit it misses saw at least a share of entries still
 * queued, so a later take from that ring, at the mark, sees the bit. */
static inline void ica_room_made(struct server_entry *server, const struct ring *ring,
                                 uint32_t core, uint32_t server_pid)
{
    if ((__atomic_load_n(&server->room_wanted[core / 64], __ATOMIC_RELAXED) &
         (1ull << (core % 64))) &&
        ring_count(ring) <= ICA_RING_ROOM_MARK)
        ica_room_announce(server, core, server_pid);
}

/* The server ended (the m-kernel, after unregistering it): every waiting
 * sender looks again and finds it gone. */
void ica_room_announce_all(struct server_entry *server, uint32_t server_pid);
