/* ring.c: the single-producer single-consumer ring of ring.h. Indices run
 * freely and are masked on use; acquire/release ordering makes a slot's
 * contents visible before the index that publishes it. */
#include "ring.h"
#include <string.h>

size_t ring_bytes(uint32_t capacity, uint32_t slot_size)
{
    return sizeof(struct ring) + (size_t)capacity * slot_size;
}

bool ring_init(struct ring *ring, uint32_t capacity, uint32_t slot_size)
{
    if (capacity == 0 || (capacity & (capacity - 1)) != 0 || slot_size == 0)
        return false;
    memset(ring, 0, sizeof(*ring));
    ring->capacity = capacity;
    ring->slot_size = slot_size;
    return true;
}

static uint8_t *ring_slot(const struct ring *ring, uint32_t index)
{
    return (uint8_t *)ring->slots + (size_t)(index & (ring->capacity - 1)) * ring->slot_size;
}

uint32_t ring_count(const struct ring *ring)
{
    uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
    uint32_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    return head - tail;
}

bool ring_is_empty(const struct ring *ring)
{
    return ring_count(ring) == 0;
}

bool ring_is_full(const struct ring *ring)
{
    return ring_count(ring) >= ring->capacity;
}

/* Copies one slot; the common 8-byte slot (ICA ids) without a memcpy call. */
static void copy_slot(void *to, const void *from, uint32_t slot_size)
{
    if (slot_size == sizeof(uint64_t))
        *(uint64_t *)to = *(const uint64_t *)from;
    else
        memcpy(to, from, slot_size);
}

bool ring_push(struct ring *ring, const void *item)
{
    uint32_t head = ring->head;
    uint32_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    if (head - tail >= ring->capacity)
        return false;
    copy_slot(ring_slot(ring, head), item, ring->slot_size);
    __atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
    return true;
}

const void *ring_peek(const struct ring *ring)
{
    uint32_t tail = ring->tail;
    uint32_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
    if (head == tail)
        return NULL;
    return ring_slot(ring, tail);
}

bool ring_pop(struct ring *ring, void *item)
{
    const void *slot = ring_peek(ring);
    if (slot == NULL)
        return false;
    copy_slot(item, slot, ring->slot_size);
    __atomic_store_n(&ring->tail, ring->tail + 1, __ATOMIC_RELEASE);
    return true;
}
