/* nvme_queue.c: the submission and completion rings of one NVMe queue pair.
 * A completion is new while its phase bit equals the queue's phase, which
 * flips each time the head wraps (NVMe 1.4, 4.6). */
#include "nvme_queue.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <string.h>

#define PAGE_BYTES 4096u
#define MAX_ENTRIES (PAGE_BYTES / sizeof(struct nvme_command))

long nvme_queue_set_up(struct nvme_queue *queue, uint16_t id, uint16_t entries,
                       volatile uint8_t *registers, uint32_t dstrd)
{
    if (entries < 2 || entries > MAX_ENTRIES)
        return -E_INVALID;
    struct dma_region memory;
    long error = dma_allocate(2 * PAGE_BYTES, &memory);
    if (error < 0)
        return error;
    memset(queue, 0, sizeof(*queue));
    queue->id = id;
    queue->entries = entries;
    queue->submissions = (volatile struct nvme_command *)memory.address;
    queue->submissions_physical = memory.physical;
    queue->completions = (volatile struct nvme_completion *)(memory.address + PAGE_BYTES);
    queue->completions_physical = memory.physical + PAGE_BYTES;
    uint32_t stride = 4u << dstrd;
    queue->submission_doorbell =
        (volatile uint32_t *)(registers + NVME_DOORBELLS + (2u * id) * stride);
    queue->completion_doorbell =
        (volatile uint32_t *)(registers + NVME_DOORBELLS + (2u * id + 1) * stride);
    nvme_queue_reset(queue);
    return 0;
}

void nvme_queue_reset(struct nvme_queue *queue)
{
    for (unsigned i = 0; i < queue->entries; i++)
        queue->completions[i].status = 0; /* phase 0: nothing posted */
    queue->submission_tail = queue->submission_head = queue->completion_head = 0;
    queue->phase = 1;
}

bool nvme_queue_full(const struct nvme_queue *queue)
{
    return (uint16_t)((queue->submission_tail + 1) % queue->entries) == queue->submission_head;
}

void nvme_queue_submit(struct nvme_queue *queue, const struct nvme_command *command)
{
    volatile uint32_t *slot = (volatile uint32_t *)&queue->submissions[queue->submission_tail];
    const uint32_t *words = (const uint32_t *)command;
    for (unsigned i = 0; i < sizeof(*command) / sizeof(uint32_t); i++)
        slot[i] = words[i];
    queue->submission_tail = (uint16_t)((queue->submission_tail + 1) % queue->entries);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the entry is in memory before the doorbell */
    *queue->submission_doorbell = queue->submission_tail;
}

bool nvme_queue_take(struct nvme_queue *queue, struct nvme_completion *completion)
{
    volatile struct nvme_completion *next = &queue->completions[queue->completion_head];
    if (NVME_PHASE(next->status) != queue->phase)
        return false;
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the phase before the rest of the entry */
    completion->result = next->result;
    completion->sq_head = next->sq_head;
    completion->sq_id = next->sq_id;
    completion->command_id = next->command_id;
    completion->status = next->status;
    queue->submission_head = completion->sq_head;
    queue->completion_head = (uint16_t)(queue->completion_head + 1);
    if (queue->completion_head == queue->entries) {
        queue->completion_head = 0;
        queue->phase ^= 1;
    }
    return true;
}

void nvme_queue_release(struct nvme_queue *queue)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *queue->completion_doorbell = queue->completion_head;
}
