/* ring.h: the one ring buffer of Formica. A single-producer single-consumer
 * queue of fixed-size slots in caller-provided memory; the producer writes
 * only `head` and the slots, the consumer writes only `tail`, so no lock is
 * needed. Used by the inter-core area and by every request/result ring. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ring {
    uint32_t head;      /* next slot to fill; written by the producer only */
    uint32_t capacity;  /* number of slots, a power of two */
    uint32_t slot_size; /* bytes per slot */
    uint8_t producer_pad[52];
    uint32_t tail; /* next slot to drain; written by the consumer only */
    uint8_t consumer_pad[60];
    uint8_t slots[];
};

/* Bytes a ring of `capacity` slots of `slot_size` bytes occupies. */
size_t ring_bytes(uint32_t capacity, uint32_t slot_size);
/* Prepares `ring` (memory of ring_bytes size); capacity must be a power of two. */
bool ring_init(struct ring *ring, uint32_t capacity, uint32_t slot_size);
/* Copies `item` (slot_size bytes) in; false, and nothing changes, when full. */
bool ring_push(struct ring *ring, const void *item);
/* Copies the oldest item out into `item`; false when empty. */
bool ring_pop(struct ring *ring, void *item);
/* Pointer to the oldest item without removing it, or NULL when empty. */
const void *ring_peek(const struct ring *ring);
uint32_t ring_count(const struct ring *ring);
bool ring_is_empty(const struct ring *ring);
bool ring_is_full(const struct ring *ring);

/* ring_is_empty for the consumer itself, inlined on hot paths: the tail is
 * its own, the head is read with acquire. */
static inline bool ring_consumer_sees_empty(const struct ring *ring)
{
    return __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) == ring->tail;
}
