/* nvme.c: DK's NVMe driver. The first NVMe controller (class 01/08/02), its
 * first active namespace, and one I/O queue pair per core that DK serves
 * requests for (created on that core's first request); READ, WRITE and
 * FLUSH with PRP lists; errors, timeouts and a fatal status give -E_IO. */
#include "disk_drivers.h"
#include "nvme_controller.h"
#include "nvme_identity.h"
#include "nvme_interrupt.h"
#include "nvme_options.h"
#include "nvme_prp.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/pci.h>
#include <formica/refusal_log.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define IO_ENTRIES 64
#define SLOTS 32 /* commands in flight per queue pair (the command id is the slot) */
#define MAX_NAMESPACES_TRIED 16
#define CQ_PHYSICALLY_CONTIGUOUS 1u
#define CQ_INTERRUPTS_ENABLED 2u
#define SQ_PHYSICALLY_CONTIGUOUS 1u

struct io_queue {
    struct nvme_queue queue;
    uint32_t core; /* the core whose requests it carries */
    struct block_request *slots[SLOTS];
    uint64_t *prp_lists; /* one page per slot */
    uint64_t prp_lists_physical;
};

struct nvme_state {
    struct nvme_controller controller;
    struct io_queue io[NVME_MAX_IO_QUEUES];
    unsigned io_count;   /* queue pairs created (ids 1..io_count) */
    unsigned io_granted; /* what SET FEATURES (number of queues) allowed */
    unsigned io_wanted;  /* NVME_MAX_IO_QUEUES, or fewer with kernel option nvme_queues */
    bool failed;         /* the controller could not be brought back: every request fails */
    uint64_t shared_announced[4]; /* cores (< 256) told which queue pair they share */
    uint32_t namespace_id;
    uint32_t block_shift; /* log2 of the namespace's block size */
    uint32_t max_transfer_bytes;
    char serial[BLOCK_DEVICE_SERIAL_BYTES]; /* IDENTIFY controller's SN */
};

static struct nvme_state nvme;

static long create_queue_pair(struct io_queue *io)
{
    struct nvme_command command = {.opcode = NVME_ADMIN_CREATE_CQ,
                                   .prp1 = io->queue.completions_physical,
                                   .cdw10 = (uint32_t)(io->queue.entries - 1) << 16 | io->queue.id,
                                   .cdw11 = CQ_PHYSICALLY_CONTIGUOUS |
                                            CQ_INTERRUPTS_ENABLED}; /* vector 0 */
    long error = nvme_admin(&nvme.controller, &command, NULL);
    if (error < 0)
        return error;
    command = (struct nvme_command){.opcode = NVME_ADMIN_CREATE_SQ,
                                    .prp1 = io->queue.submissions_physical,
                                    .cdw10 = (uint32_t)(io->queue.entries - 1) << 16 | io->queue.id,
                                    .cdw11 = (uint32_t)io->queue.id << 16 |
                                             SQ_PHYSICALLY_CONTIGUOUS}; /* its own CQ */
    return nvme_admin(&nvme.controller, &command, NULL);
}

/* A new queue pair for `core`: its memory, then CREATE I/O CQ and SQ. */
static struct io_queue *add_queue_pair(uint32_t core)
{
    struct io_queue *io = &nvme.io[nvme.io_count];
    struct dma_region lists;
    uint16_t id = (uint16_t)(nvme.io_count + 1);
    uint32_t most = NVME_CAP_MQES(nvme.controller.capabilities);
    uint16_t entries = most < IO_ENTRIES ? (uint16_t)most : IO_ENTRIES;
    if (dma_allocate(SLOTS * NVME_PAGE_BYTES, &lists) < 0 ||
        nvme_queue_set_up(&io->queue, id, entries, nvme.controller.registers,
                          NVME_CAP_DSTRD(nvme.controller.capabilities)) < 0) {
        printf("dk: no DMA memory for NVMe queue pair %u\n", id);
        return NULL;
    }
    io->prp_lists = (uint64_t *)lists.address;
    io->prp_lists_physical = lists.physical;
    io->core = core;
    memset(io->slots, 0, sizeof(io->slots));
    if (create_queue_pair(io) < 0)
        return NULL;
    nvme.io_count++;
    printf("dk: NVMe I/O queue pair %u for core %u\n", id, core);
    return io;
}

/* The queue pair of `core`: its own, a new one while the controller grants
 * more, else one shared by cores with the same number modulo the count. */
static struct io_queue *queue_for_core(uint32_t core)
{
    if (nvme.failed)
        return NULL;
    for (unsigned i = 0; i < nvme.io_count; i++)
        if (nvme.io[i].core == core)
            return &nvme.io[i];
    if (nvme.io_count < nvme.io_granted) {
        struct io_queue *io = add_queue_pair(core);
        if (io != NULL)
            return io;
        printf("dk: NVMe: no more queue pairs after %u; cores share them\n", nvme.io_count);
        nvme.io_granted = nvme.io_count; /* do not try (and allocate) again for every request */
    }
    if (nvme.io_count == 0)
        return NULL;
    struct io_queue *shared = &nvme.io[core % nvme.io_count];
    uint64_t bit = 1ull << (core % 64);
    if (core < 256 && !(nvme.shared_announced[core / 64] & bit)) {
        nvme.shared_announced[core / 64] |= bit;
        printf("dk: NVMe core %u shares I/O queue pair %u (core %u's)\n", core, shared->queue.id,
               shared->core);
    }
    return shared;
}

static void finish(struct block_request *request, long status)
{
    request->status = status;
    request->done = true;
}

static const char *operation_name(const struct block_request *request)
{
    return request->flush ? "flush" : request->write ? "write" : "read";
}

/* READ or WRITE in the namespace's blocks; -E_INVALID when the request is not
 * whole blocks, is over the transfer limit, or its buffer cannot be described. */
static long build_transfer(struct io_queue *io, unsigned slot, const struct block_request *request,
                           struct nvme_command *command)
{
    uint32_t per_block = 1u << (nvme.block_shift - 9);
    uint64_t bytes = (uint64_t)request->sectors * SECTOR_BYTES;
    if (request->lba % per_block != 0 || request->sectors % per_block != 0 ||
        bytes > nvme.max_transfer_bytes)
        return -E_INVALID;
    struct nvme_prp prp;
    if (nvme_prp_fill(request->physical, bytes, io->prp_lists + slot * NVME_PRP_LIST_ENTRIES,
                      io->prp_lists_physical + slot * NVME_PAGE_BYTES, NVME_PRP_LIST_ENTRIES,
                      &prp) < 0)
        return -E_INVALID;
    uint64_t first_block = request->lba / per_block;
    command->opcode = request->write ? NVME_WRITE : NVME_READ;
    command->prp1 = prp.prp1;
    command->prp2 = prp.prp2;
    command->cdw10 = (uint32_t)first_block;
    command->cdw11 = (uint32_t)(first_block >> 32);
    command->cdw12 = request->sectors / per_block - 1; /* 0-based block count */
    return 0;
}

static long nvme_submit(struct block_device *device, struct block_request *request)
{
    (void)device;
    struct io_queue *io = queue_for_core(request->core);
    if (io == NULL) {
        finish(request, -E_IO); /* the controller is gone: logged when it went */
        return 0;
    }
    unsigned slot = 0;
    while (slot < SLOTS && io->slots[slot] != NULL)
        slot++;
    if (slot == SLOTS || nvme_queue_full(&io->queue))
        return -E_BUSY;
    struct nvme_command command = {
        .opcode = NVME_FLUSH, .command_id = (uint16_t)slot, .namespace_id = nvme.namespace_id};
    if (!request->flush && build_transfer(io, slot, request, &command) < 0) {
        refusal_log("dk", 0,
                    "dk: NVMe %s of %u sectors at %lu refused (block size %u, limit %u bytes)\n",
                    operation_name(request), request->sectors, request->lba, 1u << nvme.block_shift,
                    nvme.max_transfer_bytes);
        finish(request, -E_INVALID);
        return 0;
    }
    io->slots[slot] = request;
    nvme_queue_submit(&io->queue, &command);
    return 0;
}

static void fail_outstanding(void)
{
    for (unsigned i = 0; i < nvme.io_count; i++)
        for (unsigned slot = 0; slot < SLOTS; slot++)
            if (nvme.io[i].slots[slot] != NULL) {
                finish(nvme.io[i].slots[slot], -E_IO);
                nvme.io[i].slots[slot] = NULL;
            }
}

static long request_queue_count(void)
{
    uint32_t wanted = nvme.io_wanted - 1, granted = 0; /* 0-based counts */
    struct nvme_command command = {.opcode = NVME_ADMIN_SET_FEATURES,
                                   .cdw10 = NVME_FEATURE_NUMBER_OF_QUEUES,
                                   .cdw11 = wanted << 16 | wanted};
    long error = nvme_admin(&nvme.controller, &command, &granted);
    if (error < 0)
        return error;
    uint32_t submission = (granted & 0xffff) + 1, completion = (granted >> 16) + 1;
    uint32_t pairs = submission < completion ? submission : completion;
    nvme.io_granted = pairs < nvme.io_wanted ? pairs : nvme.io_wanted; /* it may grant more */
    return 0;
}

/* Controller reset: aborts every command in flight; then the same queue
 * pairs again. If that fails, the controller is given up (-E_IO from now on). */
static void recover(const char *why)
{
    printf("dk: NVMe %s (CSTS 0x%x): failing the commands in flight, resetting the controller\n",
           why, nvme_read32(&nvme.controller, NVME_CSTS));
    fail_outstanding();
    long error = nvme_controller_start(&nvme.controller);
    if (error == 0)
        error = request_queue_count();
    for (unsigned i = 0; i < nvme.io_count && error == 0; i++) {
        nvme_queue_reset(&nvme.io[i].queue);
        error = create_queue_pair(&nvme.io[i]);
    }
    if (error < 0) {
        printf("dk: NVMe controller did not come back: every request fails from now on\n");
        nvme.failed = true;
    }
}

static void take_completions(struct io_queue *io)
{
    struct nvme_completion completion;
    bool took = false;
    while (nvme_queue_take(&io->queue, &completion)) {
        took = true;
        unsigned slot = completion.command_id;
        if (slot >= SLOTS || io->slots[slot] == NULL)
            continue;
        struct block_request *request = io->slots[slot];
        io->slots[slot] = NULL;
        if (NVME_STATUS_OK(completion.status)) {
            finish(request, 0);
            continue;
        }
        printf("dk: NVMe %s of %u sectors at %lu failed (status type %u code 0x%02x)\n",
               operation_name(request), request->sectors, request->lba,
               NVME_STATUS_TYPE(completion.status), NVME_STATUS_CODE(completion.status));
        finish(request, -E_IO);
    }
    if (took)
        nvme_queue_release(&io->queue); /* also lowers INTx once every CQ is drained */
}

static void nvme_complete(struct block_device *device)
{
    (void)device;
    if (nvme.failed)
        return;
    if (nvme_controller_fatal(&nvme.controller)) {
        recover("controller fatal status");
        return;
    }
    for (unsigned i = 0; i < nvme.io_count; i++)
        take_completions(&nvme.io[i]);
}

static void nvme_timed_out(struct block_device *device)
{
    (void)device;
    if (!nvme.failed)
        recover("commands got no completion in time");
}

/* The first namespace (of NN, at most MAX_NAMESPACES_TRIED) DK can use. */
static uint64_t find_namespace(uint32_t namespaces)
{
    for (uint32_t id = 1; id <= namespaces && id <= MAX_NAMESPACES_TRIED; id++) {
        struct nvme_namespace_identity identity;
        if (nvme_identify(&nvme.controller, NVME_IDENTIFY_NAMESPACE, id) < 0)
            continue;
        long error = nvme_parse_namespace(nvme.controller.identify, &identity);
        if (error == -E_INVALID)
            printf("dk: NVMe namespace %u: %u-byte blocks or metadata, not supported\n", id,
                   1u << identity.block_shift);
        if (error < 0)
            continue;
        nvme.namespace_id = id;
        nvme.block_shift = identity.block_shift;
        printf("dk: NVMe namespace %u: %lu blocks of %u bytes\n", id, identity.blocks,
               1u << identity.block_shift);
        return identity.blocks << (identity.block_shift - 9);
    }
    return 0;
}

/* Reset and enable, IDENTIFY controller, the number of queues, the namespace. */
static uint64_t bring_up(const struct pci_function *function, bool *volatile_cache)
{
    if (nvme_controller_start(&nvme.controller) < 0 ||
        nvme_identify(&nvme.controller, NVME_IDENTIFY_CONTROLLER, 0) < 0 ||
        request_queue_count() < 0)
        return 0;
    struct nvme_controller_identity identity;
    nvme_parse_controller(nvme.controller.identify, &identity);
    nvme.max_transfer_bytes = identity.max_transfer_bytes;
    *volatile_cache = identity.volatile_cache;
    memcpy(nvme.serial, identity.serial, sizeof(nvme.serial));
    printf("dk: NVMe controller %02x:%02x.%u: %s interrupts, %u I/O queue pairs, "
           "%u-byte transfers, %s write cache, %u namespaces\n",
           function->bus, function->device, function->function, nvme_interrupt_kind(),
           nvme.io_granted, nvme.max_transfer_bytes, identity.volatile_cache ? "volatile" : "no",
           identity.namespaces);
    uint64_t sectors = find_namespace(identity.namespaces);
    if (sectors == 0)
        printf("dk: NVMe controller has no usable namespace\n");
    return sectors;
}

static bool open_controller(const struct pci_function *function)
{
    bool is_io = true;
    uint64_t bar = pci_bar(function, 0, &is_io);
    if (is_io || bar == 0) {
        printf("dk: NVMe controller without a memory BAR 0\n");
        return false;
    }
    pci_enable(function);
    return nvme_controller_open(&nvme.controller, bar) == 0;
}

bool nvme_probe(struct block_device *device)
{
    struct pci_function function;
    if (!pci_find_class(0x01, 0x08, 0x02, 0, &function))
        return false;
    /* first: owning the interrupt also claims the controller */
    if (nvme_interrupt_attach(&function) < 0 || !open_controller(&function))
        return false;
    bool volatile_cache = false;
    nvme.io_wanted = nvme_option_queue_pairs(NVME_MAX_IO_QUEUES);
    uint64_t sectors = bring_up(&function, &volatile_cache);
    if (sectors == 0 || queue_for_core((uint32_t)core_id()) == NULL)
        return false;
    memset(device, 0, sizeof(*device));
    device->driver = "nvme";
    device->sectors = sectors;
    device->port = nvme.namespace_id;
    device->max_outstanding = SLOTS;
    device->volatile_cache = volatile_cache;
    device->timeout_ms = nvme_option_timeout_ms();
    device->timed_out = nvme_timed_out;
    device->submit = nvme_submit;
    device->complete = nvme_complete;
    device->state = &nvme;
    memcpy(device->serial, nvme.serial, sizeof(device->serial));
    return true;
}
