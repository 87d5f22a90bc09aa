/* poll_bound.h: how a core's ICA poll bound adapts to the halts that follow
 * polls that gave up (ica_poll.c), as Linux's guest halt polling does. Pure
 * arithmetic, unit-tested (tests/unit/test_poll_bound.c). */
#pragma once
#include <stdint.h>

/* The next bound after a poll of `bound` TSC cycles gave up and the core
 * then halted `halted` cycles: doubled, up to `most`, when the halt was
 * shorter than `most` (a longer poll would have caught the wake); else
 * halved, down to `least`. A bound of 0 (polls off) stays 0. */
static inline uint64_t poll_bound_after_halt(uint64_t bound, uint64_t halted, uint64_t least,
                                             uint64_t most)
{
    if (halted < most)
        return bound < most / 2 ? bound * 2 : most;
    return bound / 2 > least ? bound / 2 : least;
}
