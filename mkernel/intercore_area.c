/* intercore_area.c: lays out the N×N inter-core area: a header, then one
 * ring per (sender, receiver) pair, each rounded up to a cache line so no
 * two entries share one. */
#include "intercore_area.h"
#include "ring.h"

_Static_assert(RING_CAPACITY_VALID(INTERCORE_SLOTS), "INTERCORE_SLOTS is a ring capacity");
_Static_assert(sizeof(struct intercore_area) % 64 == 0, "entries start on a cache line");
_Static_assert(sizeof(struct intercore_message) == 64,
               "one message per slot per cache line (docs/intercore.md)");

static size_t entry_bytes(void)
{
    return (ring_bytes(INTERCORE_SLOTS, sizeof(struct intercore_message)) + 63) & ~63ul;
}

size_t intercore_area_bytes(uint32_t core_count)
{
    return sizeof(struct intercore_area) + entry_bytes() * core_count * core_count;
}

void intercore_area_init(struct intercore_area *area, uint32_t core_count)
{
    area->core_count = core_count;
    area->entry_bytes = (uint32_t)entry_bytes();
    for (uint32_t from = 0; from < core_count; from++)
        for (uint32_t to = 0; to < core_count; to++)
            ring_init(intercore_entry(area, from, to), INTERCORE_SLOTS,
                      sizeof(struct intercore_message));
}
