/* nvme_controller.h: an NVMe controller's registers and admin queue: reset,
 * enable, and admin commands run one at a time and polled (bring-up and
 * queue creation are rare; I/O completions come by interrupt). */
#pragma once
#include "nvme_queue.h"
#include <stdbool.h>
#include <stdint.h>

#define NVME_MAX_IO_QUEUES 8 /* queue pairs DK creates at most (cores beyond share them) */

struct nvme_controller {
    volatile uint8_t *registers; /* BAR 0 */
    uint64_t capabilities;       /* CAP */
    uint32_t ready_timeout_ms;   /* CAP.TO: how long CSTS.RDY may take to change */
    struct nvme_queue admin;
    uint8_t *identify; /* one page for IDENTIFY data */
    uint64_t identify_physical;
    uint16_t next_command_id;
};

/* Maps BAR 0 at `bar` and reads CAP; -E_* when the controller is unusable
 * (no NVM command set, or a minimum page size above 4 KiB). */
long nvme_controller_open(struct nvme_controller *controller, uint64_t bar);
/* CC.EN = 0 (aborting everything in flight), admin queue reset and
 * registered, CC.EN = 1 with 4 KiB pages; waits for CSTS.RDY. */
long nvme_controller_start(struct nvme_controller *controller);
/* Runs one admin command (its command id is set here) and waits for it:
 * 0 and dword 0 of the completion in *result, or -E_IO (status, timeout or
 * a fatal controller status) with a log line. */
long nvme_admin(struct nvme_controller *controller, struct nvme_command *command, uint32_t *result);
/* IDENTIFY (CNS `cns`, namespace `namespace_id`) into controller->identify. */
long nvme_identify(struct nvme_controller *controller, uint32_t cns, uint32_t namespace_id);
/* CSTS.CFS: the controller has failed and needs a reset. */
bool nvme_controller_fatal(const struct nvme_controller *controller);
uint32_t nvme_read32(const struct nvme_controller *controller, unsigned offset);
/* Milliseconds to TSC ticks, and whether the TSC has passed `deadline`. */
uint64_t nvme_deadline_after(uint32_t milliseconds);
bool nvme_deadline_passed(uint64_t deadline);
