/* run_queue.c: strict priority between levels, round robin within one. */
#include "run_queue.h"

void run_queue_init(struct run_queue *queue)
{
    queue->ready_levels = 0;
    for (int level = 0; level < RUN_QUEUE_LEVELS; level++)
        ring_init(&queue->level[level].ring, RUN_QUEUE_CAPACITY, sizeof(uint32_t));
}

bool run_queue_push(struct run_queue *queue, uint32_t slot, uint32_t priority)
{
    if (priority >= RUN_QUEUE_LEVELS || !ring_push(&queue->level[priority].ring, &slot))
        return false;
    queue->ready_levels |= 1u << priority;
    return true;
}

uint32_t run_queue_best_priority(const struct run_queue *queue)
{
    if (queue->ready_levels == 0)
        return RUN_QUEUE_LEVELS;
    return (uint32_t)__builtin_ctz(queue->ready_levels);
}

uint32_t run_queue_pop(struct run_queue *queue)
{
    uint32_t level = run_queue_best_priority(queue);
    uint32_t slot;
    if (level == RUN_QUEUE_LEVELS || !ring_pop(&queue->level[level].ring, &slot))
        return RUN_QUEUE_EMPTY;
    if (ring_is_empty(&queue->level[level].ring))
        queue->ready_levels &= ~(1u << level);
    return slot;
}
