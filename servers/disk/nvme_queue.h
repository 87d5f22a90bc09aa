/* nvme_queue.h: one NVMe submission/completion queue pair in DMA memory
 * with its two doorbells: entries go in at the submission tail, results are
 * taken at the completion head while their phase bit matches. */
#pragma once
#include "nvme_spec.h"
#include <stdbool.h>
#include <stdint.h>

struct nvme_queue {
    uint16_t id; /* 0 = admin */
    uint16_t entries;
    volatile struct nvme_command *submissions;
    volatile struct nvme_completion *completions;
    uint64_t submissions_physical, completions_physical;
    volatile uint32_t *submission_doorbell, *completion_doorbell;
    uint16_t submission_tail, submission_head, completion_head;
    uint16_t phase; /* the phase bit of a new completion */
};

/* Allocates both rings (up to 64 entries: one page each) and finds the
 * doorbells of queue `id` in `registers` (stride 4 << dstrd bytes). */
long nvme_queue_set_up(struct nvme_queue *queue, uint16_t id, uint16_t entries,
                       volatile uint8_t *registers, uint32_t dstrd);
/* Back to empty, as after a controller reset or a new CREATE I/O SQ/CQ. */
void nvme_queue_reset(struct nvme_queue *queue);
bool nvme_queue_full(const struct nvme_queue *queue);
/* Copies `command` to the tail and rings the submission doorbell. */
void nvme_queue_submit(struct nvme_queue *queue, const struct nvme_command *command);
/* Takes the next completion if the device has posted one (no doorbell yet). */
bool nvme_queue_take(struct nvme_queue *queue, struct nvme_completion *completion);
/* Tells the device how far completions were taken (lowers its interrupt). */
void nvme_queue_release(struct nvme_queue *queue);
