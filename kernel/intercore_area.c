/* intercore_area.c: the inter-core area's table and its rings, connected on
 * demand (intercore_area.h). Publishing an entry is a release store of its
 * pointer after ring_init; readers load it with acquire, so a core never
 * sees a ring before it is ready. */
#include "intercore_area.h"

uint32_t intercore_slots_for(uint32_t core_count)
{
    if (core_count <= 32)
        return INTERCORE_SLOTS_FEW_CORES;
    if (core_count <= 128)
        return INTERCORE_SLOTS_MANY_CORES;
    return INTERCORE_SLOTS_MOST_CORES;
}

static uint32_t entry_bytes_for(uint32_t slots)
{
    return (uint32_t)((ring_bytes(slots, INTERCORE_MESSAGE_BYTES) + 63) & ~(size_t)63);
}

size_t intercore_area_bytes(uint32_t core_count)
{
    return sizeof(struct intercore_area) + (size_t)core_count * core_count * sizeof(struct ring *);
}

void intercore_area_init(struct intercore_area *area, uint32_t core_count)
{
    area->core_count = core_count;
    area->slots = intercore_slots_for(core_count);
    area->entry_bytes = entry_bytes_for(area->slots);
    area->pairs = 0;
    area->entry_memory = 0;
    for (size_t i = 0; i < (size_t)core_count * core_count; i++)
        area->entries[i] = NULL;
}

static struct ring **slot_of(struct intercore_area *area, uint32_t from, uint32_t to)
{
    return &area->entries[(size_t)from * area->core_count + to];
}

struct ring *intercore_entry(struct intercore_area *area, uint32_t from, uint32_t to)
{
    return __atomic_load_n(slot_of(area, from, to), __ATOMIC_ACQUIRE);
}

static int connect_one(struct intercore_area *area, uint32_t from, uint32_t to,
                       intercore_allocate_fn allocate, void *context)
{
    if (intercore_entry(area, from, to) != NULL)
        return 0;
    struct ring *ring = allocate(context, area->entry_bytes);
    if (ring == NULL)
        return -1;
    ring_init(ring, area->slots, INTERCORE_MESSAGE_BYTES);
    area->pairs++;
    area->entry_memory += area->entry_bytes;
    __atomic_store_n(slot_of(area, from, to), ring, __ATOMIC_RELEASE);
    return 0;
}

int intercore_area_connect(struct intercore_area *area, uint32_t a, uint32_t b,
                           intercore_allocate_fn allocate, void *context)
{
    if (a >= area->core_count || b >= area->core_count || a == b)
        return -1;
    if (connect_one(area, a, b, allocate, context) != 0)
        return -1;
    return connect_one(area, b, a, allocate, context);
}

uint64_t intercore_area_memory(const struct intercore_area *area)
{
    return intercore_area_bytes(area->core_count) + area->entry_memory;
}
