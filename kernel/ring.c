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

/* A slot's bytes: the two sizes the kernel uses (a run queue's 4-byte
 * slot number, an inter-core message's 64 bytes) as plain moves, eight
 * bytes a move for a message; any other size through memcpy. */
static inline void copy_slot(void *to, const void *from, uint32_t size)
{
    if (size == sizeof(uint32_t)) {
        __builtin_memcpy(to, from, sizeof(uint32_t));
    } else if (size == 64) {
#pragma GCC unroll 8
        for (uint32_t at = 0; at < 64; at += sizeof(uint64_t)) {
            uint64_t word;
            __builtin_memcpy(&word, (const uint8_t *)from + at, sizeof word);
            __builtin_memcpy((uint8_t *)to + at, &word, sizeof word);
        }
    } else {
        memcpy(to, from, size);
    }
}

bool ring_push(struct ring *ring, const void *item)
{
    uint32_t head = ring->head;
    uint32_t tail = atomic_load_acquire(&ring->tail);
    if (head - tail >= ring->capacity)
        return false;
    copy_slot(ring_slot(ring, head), item, ring->slot_size);
    atomic_store_release(&ring->head, head + 1);
    return true;
}

bool ring_pop(struct ring *ring, void *item)
{
    const void *slot = ring_peek(ring);
    if (slot == NULL)
        return false;
    copy_slot(item, slot, ring->slot_size);
    atomic_store_release(&ring->tail, ring->tail + 1);
    return true;
}
