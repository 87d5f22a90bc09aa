/* nvme_controller.c: NVMe controller bring-up (NVMe 1.4, 7.6.1): disable,
 * admin queue attributes and bases, enable, wait for ready; and polled admin
 * commands with a deadline. Every failure is -E_IO (or -E_NO_MEMORY) with a log line. */
#include "nvme_controller.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define ADMIN_ENTRIES 32
#define ADMIN_TIMEOUT_MS 5000

static uint64_t tsc_per_ms;

uint64_t nvme_deadline_after(uint32_t milliseconds)
{
    if (tsc_per_ms == 0) {
        struct clock_info clock;
        tsc_per_ms = clock_get(&clock) >= 0 && clock.tsc_hz >= 1000 ? clock.tsc_hz / 1000 : 1000000;
    }
    return read_timestamp_counter() + milliseconds * tsc_per_ms;
}

bool nvme_deadline_passed(uint64_t deadline)
{
    return read_timestamp_counter() > deadline;
}

uint32_t nvme_read32(const struct nvme_controller *controller, unsigned offset)
{
    return *(volatile uint32_t *)(controller->registers + offset);
}

static void write32(struct nvme_controller *controller, unsigned offset, uint32_t value)
{
    *(volatile uint32_t *)(controller->registers + offset) = value;
}

static void write64(struct nvme_controller *controller, unsigned offset, uint64_t value)
{
    write32(controller, offset, (uint32_t)value);
    write32(controller, offset + 4, (uint32_t)(value >> 32));
}

bool nvme_controller_fatal(const struct nvme_controller *controller)
{
    uint32_t status = nvme_read32(controller, NVME_CSTS);
    return status != 0xffffffffu && (status & NVME_CSTS_FATAL) != 0;
}

/* BAR 0's registers and the doorbells of the admin queue and up to
 * NVME_MAX_IO_QUEUES I/O queues (CAP must be read before their size is known). */
static long map_registers(struct nvme_controller *controller, uint64_t bar)
{
    long address = device_map(bar, NVME_DOORBELLS);
    if (address >= 0) {
        controller->registers = (volatile uint8_t *)address;
        controller->capabilities = nvme_read32(controller, NVME_CAP) |
                                   (uint64_t)nvme_read32(controller, NVME_CAP + 4) << 32;
        uint32_t stride = 4u << NVME_CAP_DSTRD(controller->capabilities);
        address = device_map(bar, NVME_DOORBELLS + 2u * (NVME_MAX_IO_QUEUES + 1) * stride);
    }
    if (address < 0) {
        printf("dk: cannot map NVMe BAR 0 at 0x%lx: %s\n", bar, error_text(address));
        return address;
    }
    controller->registers = (volatile uint8_t *)address;
    return 0;
}

long nvme_controller_open(struct nvme_controller *controller, uint64_t bar)
{
    memset(controller, 0, sizeof(*controller));
    long error = map_registers(controller, bar);
    if (error < 0)
        return error;
    uint64_t cap = controller->capabilities;
    controller->ready_timeout_ms = NVME_CAP_TIMEOUT_MS(cap) > 0 ? NVME_CAP_TIMEOUT_MS(cap) : 500;
    if (!NVME_CAP_CSS_NVM(cap) || NVME_CAP_MPSMIN(cap) != 0) {
        printf("dk: NVMe controller without the NVM command set or 4 KiB pages (CAP 0x%lx)\n", cap);
        return -E_IO;
    }
    struct dma_region page;
    error = dma_allocate(4096, &page);
    if (error < 0)
        return error;
    controller->identify = (uint8_t *)page.address;
    controller->identify_physical = page.physical;
    return nvme_queue_set_up(&controller->admin, 0, ADMIN_ENTRIES, controller->registers,
                             NVME_CAP_DSTRD(cap));
}

static long wait_ready(struct nvme_controller *controller, bool ready)
{
    uint64_t deadline = nvme_deadline_after(controller->ready_timeout_ms);
    for (;;) {
        uint32_t status = nvme_read32(controller, NVME_CSTS);
        if (((status & NVME_CSTS_READY) != 0) == ready)
            return 0;
        if (nvme_deadline_passed(deadline)) {
            printf("dk: NVMe controller not %s after %u ms (CSTS 0x%x)\n",
                   ready ? "ready" : "stopped", controller->ready_timeout_ms, status);
            return -E_IO;
        }
        yield();
    }
}

long nvme_controller_start(struct nvme_controller *controller)
{
    write32(controller, NVME_CC, 0);
    long error = wait_ready(controller, false);
    if (error < 0)
        return error;
    nvme_queue_reset(&controller->admin);
    uint32_t entries = controller->admin.entries - 1u; /* 0-based sizes */
    write32(controller, NVME_AQA, entries << 16 | entries);
    write64(controller, NVME_ASQ, controller->admin.submissions_physical);
    write64(controller, NVME_ACQ, controller->admin.completions_physical);
    write32(controller, NVME_CC, NVME_CC_IOCQES | NVME_CC_IOSQES | NVME_CC_ENABLE);
    return wait_ready(controller, true);
}

/* The completion of command `id`; completions of commands that timed out
 * before are taken and dropped. -E_IO on a fatal status or at the deadline. */
static long wait_for(struct nvme_controller *controller, uint8_t opcode, uint16_t id,
                     struct nvme_completion *completion)
{
    uint64_t deadline = nvme_deadline_after(ADMIN_TIMEOUT_MS);
    for (;;) {
        while (nvme_queue_take(&controller->admin, completion)) {
            nvme_queue_release(&controller->admin);
            if (completion->command_id == id)
                return 0;
        }
        if (nvme_controller_fatal(controller)) {
            printf("dk: NVMe admin command 0x%02x: controller fatal status\n", opcode);
            return -E_IO;
        }
        if (nvme_deadline_passed(deadline)) {
            printf("dk: NVMe admin command 0x%02x: no completion in %u ms\n", opcode,
                   ADMIN_TIMEOUT_MS);
            return -E_IO;
        }
        yield();
    }
}

long nvme_admin(struct nvme_controller *controller, struct nvme_command *command, uint32_t *result)
{
    command->command_id = controller->next_command_id++;
    nvme_queue_submit(&controller->admin, command);
    struct nvme_completion completion;
    long error = wait_for(controller, command->opcode, command->command_id, &completion);
    if (error < 0)
        return error;
    if (!NVME_STATUS_OK(completion.status)) {
        printf("dk: NVMe admin command 0x%02x failed (status type %u code 0x%02x)\n",
               command->opcode, NVME_STATUS_TYPE(completion.status),
               NVME_STATUS_CODE(completion.status));
        return -E_IO;
    }
    if (result != NULL)
        *result = completion.result;
    return 0;
}

long nvme_identify(struct nvme_controller *controller, uint32_t cns, uint32_t namespace_id)
{
    struct nvme_command command = {.opcode = NVME_ADMIN_IDENTIFY,
                                   .namespace_id = namespace_id,
                                   .prp1 = controller->identify_physical,
                                   .cdw10 = cns};
    return nvme_admin(controller, &command, NULL);
}
