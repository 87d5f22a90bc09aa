/* bonnie_random.h: Bonnie's deterministic reference sequence, the one
 * definition that the C program, its unit test and the host replay
 * (build/bench/bonnie_replay.py) follow: splitmix64 per child, see docs/bonnie.md. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define BONNIE_SLOT_BYTES 16u /* child c updates bytes [16c, 16c + 16) of a chunk */
#define BONNIE_CHILD_MIX 0xD1B54A32D192ED03ull
#define BONNIE_GOLDEN_GAMMA 0x9E3779B97F4A7C15ull

struct bonnie_random {
    uint64_t state;
};

/* One reference: which chunk, whether it is updated, and with what. */
struct bonnie_reference {
    uint64_t chunk;
    bool update;
    uint64_t pattern[2]; /* the 16 slot bytes, little-endian, when update */
};

static inline void bonnie_random_seed(struct bonnie_random *random, uint64_t seed, uint32_t child)
{
    random->state = seed ^ (BONNIE_CHILD_MIX * ((uint64_t)child + 1));
}

/* splitmix64 (Steele, Lea, Flood 2014). */
static inline uint64_t bonnie_random_next(struct bonnie_random *random)
{
    random->state += BONNIE_GOLDEN_GAMMA;
    uint64_t z = random->state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Draws the next reference: chunk = next % chunks; update when
 * next % 100 < update_pct; then two more draws for the pattern. */
static inline void bonnie_next_reference(struct bonnie_random *random, uint64_t chunks,
                                         uint32_t update_pct, struct bonnie_reference *reference)
{
    reference->chunk = bonnie_random_next(random) % chunks;
    reference->update = bonnie_random_next(random) % 100 < update_pct;
    reference->pattern[0] = reference->update ? bonnie_random_next(random) : 0;
    reference->pattern[1] = reference->update ? bonnie_random_next(random) : 0;
}

/* The byte the parent writes at `offset` when it creates the file. */
static inline uint8_t bonnie_fill_byte(uint64_t offset)
{
    return (uint8_t)((offset % 251) ^ (offset >> 12));
}
