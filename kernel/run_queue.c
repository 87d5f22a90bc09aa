/* run_queue.c: strict priority between levels; servers round robin, applications
 * fair between accounts (fair_queue.c). */
#include "run_queue.h"

void run_queue_init(struct run_queue *queue, uint64_t credit)
{
    queue->ready_levels = 0;
    ring_init(&queue->servers.ring, RUN_QUEUE_CAPACITY, sizeof(uint32_t));
    fair_queue_init(&queue->applications, credit);
}

bool run_queue_push(struct run_queue *queue, uint32_t slot, uint32_t priority, uint32_t account,
                    uint32_t running)
{
    bool pushed = false;
    if (priority == RUN_QUEUE_SERVERS)
        pushed = ring_push(&queue->servers.ring, &slot);
    else if (priority == RUN_QUEUE_APPLICATIONS)
        pushed = fair_queue_push(&queue->applications, slot, account, running);
    if (pushed)
        queue->ready_levels |= 1u << priority;
    return pushed;
}

uint32_t run_queue_best_priority(const struct run_queue *queue)
{
    if (queue->ready_levels == 0)
        return RUN_QUEUE_LEVELS;
    return (uint32_t)__builtin_ctz(queue->ready_levels);
}

static uint32_t pop_server(struct run_queue *queue)
{
    uint32_t slot = RUN_QUEUE_EMPTY;
    ring_pop(&queue->servers.ring, &slot);
    if (ring_is_empty(&queue->servers.ring))
        queue->ready_levels &= ~(1u << RUN_QUEUE_SERVERS);
    return slot;
}

static uint32_t pop_application(struct run_queue *queue)
{
    uint32_t slot = fair_queue_pop(&queue->applications);
    if (queue->applications.count == 0)
        queue->ready_levels &= ~(1u << RUN_QUEUE_APPLICATIONS);
    return slot;
}

uint32_t run_queue_pop(struct run_queue *queue)
{
    switch (run_queue_best_priority(queue)) {
    case RUN_QUEUE_SERVERS:
        return pop_server(queue);
    case RUN_QUEUE_APPLICATIONS:
        return pop_application(queue);
    }
    return RUN_QUEUE_EMPTY;
}
