/* space.h: backend space in 4 KiB units with first-free placement (seed 004
 * §4.1): a block of n units takes the lowest free run of n units aligned to
 * n. Pure; used by the NVM and disk backends. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct space {
    uint64_t *bits; /* 1 = unit in use */
    uint32_t units, used;
    uint32_t lowest_free; /* no free unit below this */
};

/* `bits` holds (units + 63) / 64 words, owned by the caller. */
void space_init(struct space *space, uint64_t *bits, uint32_t units);
/* The first unit of a free aligned run of `count` (a power of two), now in
 * use; 0xffffffff when there is none. */
uint32_t space_take(struct space *space, uint32_t count);
/* Marks a known run in use (mounting existing contents); false if it overlaps. */
bool space_mark(struct space *space, uint32_t first, uint32_t count);
void space_give(struct space *space, uint32_t first, uint32_t count);
static inline uint32_t space_free_units(const struct space *space)
{
    return space->units - space->used;
}
