/* memnode_liveness.c: the memory-node liveness rule (docs/memnode.md): probe
 * a silent node once a second while waiting for it, declare it dead after
 * MEMNODE_DEAD_AFTER_US of silence (none of it counted while our own link is
 * down), back retransmissions off. No system calls: the host unit tests run
 * it with a fake clock. */
#include <formica/memnode_liveness.h>

void memnode_liveness_init(struct memnode_liveness *liveness, uint64_t now)
{
    liveness->last_heard = now;
    liveness->last_probe = 0;
    liveness->wait_start = 0;
    liveness->probe_every = MEMNODE_PROBE_INTERVAL_US;
    liveness->dead_after = MEMNODE_DEAD_AFTER_US;
    liveness->unreachable = false;
    liveness->reachable_since = 0;
}

void memnode_liveness_heard(struct memnode_liveness *liveness, uint64_t now)
{
    liveness->last_heard = now;
}

void memnode_liveness_waiting(struct memnode_liveness *liveness, bool waiting, uint64_t now)
{
    if (waiting && liveness->wait_start == 0)
        liveness->wait_start = now ? now : 1;
    else if (!waiting)
        liveness->wait_start = 0;
}

void memnode_liveness_reachable(struct memnode_liveness *liveness, bool reachable, uint64_t now)
{
    if (!reachable) {
        liveness->unreachable = true;
    } else if (liveness->unreachable) {
        liveness->unreachable = false;
        liveness->reachable_since = now;
    }
}

static uint64_t later(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

uint64_t memnode_liveness_silence(const struct memnode_liveness *liveness, uint64_t now)
{
    if (liveness->unreachable)
        return 0;
    uint64_t since =
        later(later(liveness->last_heard, liveness->wait_start), liveness->reachable_since);
    return now > since ? now - since : 0;
}

enum memnode_liveness_decision memnode_liveness_check(struct memnode_liveness *liveness,
                                                      uint64_t now)
{
    if (liveness->unreachable)
        return MEMNODE_UNREACHABLE;
    if (liveness->wait_start == 0)
        return MEMNODE_ALIVE;
    uint64_t silence = memnode_liveness_silence(liveness, now);
    if (silence >= liveness->dead_after)
        return MEMNODE_DEAD;
    if (silence < liveness->probe_every || now - liveness->last_probe < liveness->probe_every)
        return MEMNODE_ALIVE;
    liveness->last_probe = now;
    return MEMNODE_PROBE;
}

uint64_t memnode_backoff(uint64_t timeout)
{
    uint64_t next = timeout * 2;
    return next > MEMNODE_BACKOFF_MAX_US ? MEMNODE_BACKOFF_MAX_US : next;
}

uint64_t memnode_rtt_update(uint64_t srtt, uint64_t sample)
{
    return srtt == 0 ? sample : (7 * srtt + sample) / 8;
}

uint64_t memnode_rto(uint64_t srtt, uint64_t initial)
{
    if (srtt == 0)
        return initial;
    uint64_t rto = 4 * srtt;
    return rto < MEMNODE_RTO_MIN_US   ? MEMNODE_RTO_MIN_US
           : rto > MEMNODE_RTO_MAX_US ? MEMNODE_RTO_MAX_US
                                      : rto;
}
