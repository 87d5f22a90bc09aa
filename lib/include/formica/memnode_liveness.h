/* memnode_liveness.h: when a memory node is slow and when it is dead
 * (docs/memnode.md, "Liveness"): a node the client waits for is probed
 * once a second while silent, and declared dead only after it stayed silent
 * for the whole deadline (tens of seconds). While this machine's own link is
 * down the node is unreachable, neither probed nor judged: its silence counts
 * from the link's return. Retransmissions back off. Pure. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define MEMNODE_PROBE_INTERVAL_US 1000000ull /* a PING a second to a silent node */
#define MEMNODE_DEAD_AFTER_US 20000000ull    /* silent this long while awaited: dead */
#define MEMNODE_BACKOFF_MAX_US 4000000ull    /* retransmission timeouts double up to this */

struct memnode_liveness {
    uint64_t last_heard;      /* any valid frame from the node */
    uint64_t last_probe;      /* the last PING sent */
    uint64_t wait_start;      /* when the client began waiting for it (0: not waiting) */
    uint64_t probe_every;     /* MEMNODE_PROBE_INTERVAL_US unless changed */
    uint64_t dead_after;      /* MEMNODE_DEAD_AFTER_US unless changed */
    bool unreachable;         /* our link is down: nothing can be heard */
    uint64_t reachable_since; /* when the link last came back (0: never went down) */
};

enum memnode_liveness_decision {
    MEMNODE_ALIVE = 0,       /* heard recently enough, or nothing awaited */
    MEMNODE_PROBE = 1,       /* silent: send a PING now (the probe time is recorded) */
    MEMNODE_DEAD = 2,        /* silent for dead_after while awaited */
    MEMNODE_UNREACHABLE = 3, /* our link is down: no probe, no verdict */
};

void memnode_liveness_init(struct memnode_liveness *liveness, uint64_t now);
void memnode_liveness_heard(struct memnode_liveness *liveness, uint64_t now);
/* The client has (true) or no longer has (false) something outstanding. */
void memnode_liveness_waiting(struct memnode_liveness *liveness, bool waiting, uint64_t now);
enum memnode_liveness_decision memnode_liveness_check(struct memnode_liveness *liveness,
                                                      uint64_t now);
/* Our link went down (false) or came back (true). */
void memnode_liveness_reachable(struct memnode_liveness *liveness, bool reachable, uint64_t now);
/* Silence so far, counted from the latest of the last frame, the wait's
 * start and the link's return; 0 while unreachable. */
uint64_t memnode_liveness_silence(const struct memnode_liveness *liveness, uint64_t now);
/* The next retransmission timeout after one without progress: doubled, capped. */
uint64_t memnode_backoff(uint64_t timeout);

/* The retransmission timeout follows the measured round trip (as TCP's does):
 * a smoothed round-trip time (srtt, 0 before the first sample) and the
 * timeout it gives: 4 x srtt within [MEMNODE_RTO_MIN_US, MEMNODE_RTO_MAX_US]. */
#define MEMNODE_RTO_MIN_US 5000ull
#define MEMNODE_RTO_MAX_US 1000000ull
uint64_t memnode_rtt_update(uint64_t srtt, uint64_t sample);
uint64_t memnode_rto(uint64_t srtt, uint64_t initial);
