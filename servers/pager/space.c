/* space.c: first-free allocation of aligned unit runs over a bitmap, with a
 * low-water mark so the search starts at the lowest free unit. */
#include "space.h"

#define SPACE_NONE 0xffffffffu

static bool unit_used(const struct space *space, uint32_t unit)
{
    return (space->bits[unit / 64] >> (unit % 64)) & 1;
}

static void set_units(struct space *space, uint32_t first, uint32_t count, bool used)
{
    for (uint32_t unit = first; unit < first + count; unit++) {
        uint64_t mask = 1ull << (unit % 64);
        if (used)
            space->bits[unit / 64] |= mask;
        else
            space->bits[unit / 64] &= ~mask;
    }
}

static bool run_free(const struct space *space, uint32_t first, uint32_t count)
{
    if (count < 64) {
        uint64_t mask = ((1ull << count) - 1) << (first % 64);
        return (space->bits[first / 64] & mask) == 0;
    }
    for (uint32_t word = first / 64; word < (first + count) / 64; word++)
        if (space->bits[word] != 0)
            return false;
    return true;
}

void space_init(struct space *space, uint64_t *bits, uint32_t units)
{
    space->bits = bits;
    space->units = units;
    space->used = 0;
    space->lowest_free = 0;
    for (uint32_t word = 0; word < (units + 63) / 64; word++)
        bits[word] = 0;
    uint32_t padded = (units + 63) / 64 * 64; /* units past the end count as used */
    set_units(space, units, padded - units, true);
}

uint32_t space_take(struct space *space, uint32_t count)
{
    if (count == 0 || (count & (count - 1)) != 0 || count > space->units)
        return SPACE_NONE;
    uint32_t first = space->lowest_free / count * count;
    for (; first + count <= space->units; first += count) {
        if (!run_free(space, first, count))
            continue;
        set_units(space, first, count, true);
        space->used += count;
        while (space->lowest_free < space->units && unit_used(space, space->lowest_free))
            space->lowest_free++;
        return first;
    }
    return SPACE_NONE;
}

bool space_mark(struct space *space, uint32_t first, uint32_t count)
{
    if (first >= space->units || count > space->units - first)
        return false;
    for (uint32_t unit = first; unit < first + count; unit++)
        if (unit_used(space, unit))
            return false;
    set_units(space, first, count, true);
    space->used += count;
    while (space->lowest_free < space->units && unit_used(space, space->lowest_free))
        space->lowest_free++;
    return true;
}

void space_give(struct space *space, uint32_t first, uint32_t count)
{
    if (first >= space->units || count > space->units - first)
        return;
    set_units(space, first, count, false);
    space->used -= count;
    if (first < space->lowest_free)
        space->lowest_free = first;
}
