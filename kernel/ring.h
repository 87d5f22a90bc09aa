/* ring.h: the one ring buffer of Formica. A single-producer single-consumer
 * queue of fixed-size slots in caller-provided memory; the producer writes
 * only `head` and the slots, the consumer writes only `tail`, so no lock is
 * needed. Used by the inter-core area and by every request/result ring. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "atomic.h"

struct ring {
    _Atomic uint32_t head; /* next slot to fill; written by the producer only */
    uint32_t capacity;     /* number of slots, a power of two */
    uint32_t slot_size;    /* bytes per slot */
    uint8_t producer_pad[52];
    _Atomic uint32_t tail; /* next slot to drain; written by the consumer only */
    uint8_t consumer_pad[60];
    uint8_t slots[];
};

/* The producer's line (head, capacity, slot_size) and the consumer's (tail)
 * are separate 64-byte cache lines, and the slots start on a third. */
_Static_assert(offsetof(struct ring, tail) == 64, "tail shares a cache line with head");
_Static_assert(offsetof(struct ring, slots) == 128, "slots share a cache line with tail");

/* A ring's capacity is a power of two: indices wrap by masking. */
#define RING_CAPACITY_VALID(capacity) ((capacity) != 0 && ((capacity) & ((capacity)-1)) == 0)

/* Bytes a ring of `capacity` slots of `slot_size` bytes occupies. */
size_t ring_bytes(uint32_t capacity, uint32_t slot_size);
/* Prepares `ring` (memory of ring_bytes size); capacity must be a power of two. */
bool ring_init(struct ring *ring, uint32_t capacity, uint32_t slot_size);
/* The looks at a ring are inline: they sit on every request's path. */
static inline uint8_t *ring_slot(const struct ring *ring, uint32_t index)
{
    return (uint8_t *)ring->slots + (size_t)(index & (ring->capacity - 1)) * ring->slot_size;
}

static inline uint32_t ring_count(const struct ring *ring)
{
    uint32_t head = atomic_load_acquire(&ring->head);
    uint32_t tail = atomic_load_acquire(&ring->tail);
    return head - tail;
}

static inline bool ring_is_empty(const struct ring *ring)
{
    return ring_count(ring) == 0;
}

static inline bool ring_is_full(const struct ring *ring)
{
    return ring_count(ring) >= ring->capacity;
}

/* Pointer to the oldest item without removing it, or NULL when empty. */
static inline const void *ring_peek(const struct ring *ring)
{
    uint32_t tail = ring->tail;
    uint32_t head = atomic_load_acquire(&ring->head);
    if (head == tail)
        return NULL;
    return ring_slot(ring, tail);
}

/* Copies `item` (slot_size bytes) in; false, and nothing changes, when full. */
bool ring_push(struct ring *ring, const void *item);
/* Copies the oldest item out into `item`; false when empty. */
bool ring_pop(struct ring *ring, void *item);

/* ring_push / ring_pop of a ring of 8-byte slots (ICA ids), inline. */
static inline bool ring_push_u64(struct ring *ring, uint64_t item)
{
    uint32_t head = ring->head;
    uint32_t tail = atomic_load_acquire(&ring->tail);
    if (head - tail >= ring->capacity)
        return false;
    *(uint64_t *)ring_slot(ring, head) = item;
    atomic_store_release(&ring->head, head + 1);
    return true;
}

static inline bool ring_pop_u64(struct ring *ring, uint64_t *item)
{
    const void *slot = ring_peek(ring);
    if (slot == NULL)
        return false;
    *item = *(const uint64_t *)slot;
    atomic_store_release(&ring->tail, ring->tail + 1);
    return true;
}

/* ring_is_empty for the consumer itself, inlined on hot paths: the tail is
 * its own, the head is read with acquire. */
static inline bool ring_consumer_sees_empty(const struct ring *ring)
{
    return atomic_load_acquire(&ring->head) == ring->tail;
}
