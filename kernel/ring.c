/* ring.c: the single-producer single-consumer ring of ring.h. Indices run
 * freely and are masked on use; acquire/release ordering makes a slot's
 * contents visible before the index that publishes it. */
#include "ring.h"
#include "atomic.h"
#include <string.h>

size_t ring_bytes(uint32_t capacity, uint32_t slot_size)
{
    return sizeof(struct ring) + (size_t)capacity * slot_size;
}

bool ring_init(struct ring *ring, uint32_t capacity, uint32_t slot_size)
{
    if (!RING_CAPACITY_VALID(capacity) || slot_size == 0)
        return false;
    memset(ring, 0, sizeof(*ring));
    ring->capacity = capacity;
    ring->slot_size = slot_size;
    return true;
}

bool ring_push(struct ring *ring, const void *item)
{
    uint32_t head = ring->head;
    uint32_t tail = atomic_load_acquire(&ring->tail);
    if (head - tail >= ring->capacity)
        return false;
    memcpy(ring_slot(ring, head), item, ring->slot_size);
    atomic_store_release(&ring->head, head + 1);
    return true;
}

bool ring_pop(struct ring *ring, void *item)
{
    const void *slot = ring_peek(ring);
    if (slot == NULL)
        return false;
    memcpy(item, slot, ring->slot_size);
    atomic_store_release(&ring->tail, ring->tail + 1);
    return true;
}
