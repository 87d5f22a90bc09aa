/* ica_services.c: ICA slots, frames and windows, owned by the m-kernel.
 * An ICA slot's generation changes every time it is freed, so an old
 * identifier can never reach the ICA's next user. A server that ends has its
 * unanswered requests returned to their requesters with -E_SERVER_ENDED, so no
 * request is silently lost. */
#include "ica_services.h"
#include "authority.h"
#include "atomic.h"
#include "console.h"
#include "ica/ica.h"
#include "ica/ica_room.h"
#include "ica/ica_window.h"
#include "ica/ica_syscalls.h"
#include "layout.h"
#include "paging.h"
#include "physical_memory.h"
#include "shared.h"
#include <formica/errors.h>
#include <string.h>

#define COUNTED_AS_ICA 1u          /* against ICA_PER_PROCESS */
#define COUNTED_AS_BLOCK 2u        /* against ICA_BLOCKS_PER_PROCESS */
#define COUNTED_AS_DEVICE_BLOCK 3u /* against ICA_BLOCKS_PER_PROCESS, not memory: not RAM */

bool ica_services_init(void)
{
    uint64_t bytes = sizeof(struct ica_pools);
    uint64_t pools = physical_allocate((bytes + PAGE_SIZE - 1) / PAGE_SIZE, 0);
    if (pools == 0)
        return false;
    kernel_shared->icas = phys_to_virt(pools);
    struct ica_pools *icas = kernel_shared->icas;
    icas->control_reach = icas->data_reach = icas->block_reach = 0;
    for (uint32_t i = 0; i < ICA_CONTROL_SLOTS; i++)
        icas->control[i] = (struct ica){.generation = 1,
                                        .kind = ICA_KIND_CONTROL,
                                        .index = i,
                                        .user_address = ICA_CONTROL_BASE + (uint64_t)i * 4096};
    for (uint32_t i = 0; i < ICA_DATA_SLOTS; i++)
        icas->data[i] =
            (struct ica){.generation = 1,
                         .kind = ICA_KIND_DATA,
                         .index = i,
                         .user_address = ICA_DATA_BASE + (uint64_t)i * ICA_DATA_MAX_BYTES};
    for (uint32_t i = 0; i < ICA_BLOCK_SLOTS; i++)
        icas->block[i] = (struct ica){.generation = 1,
                                      .kind = ICA_KIND_BLOCK,
                                      .index = i,
                                      .user_address = ICA_BLOCK_BASE + (uint64_t)i * 4096};
    return true;
}

long ica_prepare_process(uint64_t root)
{
    return paging_prepare_tables(root, ICA_CONTROL_BASE, (uint64_t)ICA_CONTROL_SLOTS * PAGE_SIZE)
               ? 0
               : -E_NO_MEMORY;
}

/* The pool of `kind`: its slots, how many, and its reach (ica.h). */
static struct ica *pool_of(uint32_t kind, uint32_t *count, uint32_t **reach)
{
    struct ica_pools *pools = kernel_shared->icas;
    if (kind == ICA_KIND_CONTROL) {
        *count = ICA_CONTROL_SLOTS;
        *reach = &pools->control_reach;
        return pools->control;
    }
    if (kind == ICA_KIND_BLOCK) {
        *count = ICA_BLOCK_SLOTS;
        *reach = &pools->block_reach;
        return pools->block;
    }
    *count = ICA_DATA_SLOTS;
    *reach = &pools->data_reach;
    return pools->data;
}

static struct ica *free_slot(uint32_t kind)
{
    uint32_t count, *reach;
    struct ica *slots = pool_of(kind, &count, &reach);
    for (uint32_t i = 0; i < count; i++)
        if (slots[i].state == ICA_FREE) {
            if (i >= *reach)
                *reach = i + 1;
            return &slots[i];
        }
    return NULL;
}

long ica_services_allocate(uint32_t pid, uint32_t kind, uint64_t bytes)
{
    struct process *process = process_find(pid);
    if (process == NULL)
        return -E_NOT_FOUND;
    if (kind == ICA_KIND_CONTROL || (kind == ICA_KIND_BLOCK && bytes <= PAGE_SIZE))
        bytes = PAGE_SIZE;
    if ((kind != ICA_KIND_CONTROL && kind != ICA_KIND_DATA && kind != ICA_KIND_BLOCK) ||
        bytes == 0 || bytes > (kind == ICA_KIND_BLOCK ? PAGE_SIZE : ICA_DATA_MAX_BYTES))
        return -E_INVALID;
    bool block = kind == ICA_KIND_BLOCK;
    if (block ? process->blocks_allocated >= ICA_BLOCKS_PER_PROCESS
              : process->icas_allocated >= ICA_PER_PROCESS)
        return -E_BUSY;
    long share = authority_ica_allows(process, kind);
    if (share != 0)
        return share;
    struct ica *ica = free_slot(kind);
    if (ica == NULL)
        return -E_BUSY;
    uint32_t pages = (uint32_t)((bytes + PAGE_SIZE - 1) / PAGE_SIZE);
    if (!authority_memory_allows(process, (uint64_t)pages * PAGE_SIZE))
        return -E_QUOTA;
    uint64_t physical = physical_allocate(pages, 0);
    if (physical == 0)
        return -E_NO_MEMORY;
    ica->physical = physical;
    ica->pages = pages;
    ica->lent_count = 0;
    ica->lend_count = ica->mapping_lend_count = 0;
    ica->orphaned = 0;
    ica->allocator = pid;
    ica->return_depth = 0;
    memset(ica->returns, 0, sizeof ica->returns);
    ica->attached_count = 0;
    ica->delivery = 0;
    ica->device_frame = 0;
    ica->state = ICA_HELD;
    if (!ica_paste(process, ica)) {
        physical_free(physical, pages);
        ica->state = ICA_FREE;
        return -E_NO_MEMORY;
    }
    if (kind == ICA_KIND_CONTROL)
        ((struct ica_control *)phys_to_virt(physical))->magic = ICA_CONTROL_MAGIC;
    if (block)
        process->blocks_allocated++;
    else
        process->icas_allocated++;
    process->controls_allocated += kind == ICA_KIND_CONTROL;
    ica->counted = block ? COUNTED_AS_BLOCK : COUNTED_AS_ICA;
    process->ica_bytes += (uint64_t)pages * PAGE_SIZE;
    process->memory_bytes += (uint64_t)pages * PAGE_SIZE;
    return (long)ica_id_of(ica);
}

/* Takes a free data slot for frames that already exist; not counted against
 * the holder's allocation limit (the pager's swap-outs). */
long ica_services_adopt(uint32_t pid, uint64_t physical, uint64_t pages)
{
    struct process *process = process_find(pid);
    struct ica *ica = free_slot(ICA_KIND_DATA);
    if (process == NULL || ica == NULL)
        return process == NULL ? -E_NOT_FOUND : -E_BUSY;
    ica->physical = physical;
    ica->pages = (uint32_t)pages;
    ica->allocator = pid;
    ica->counted = 0;
    ica->lent_count = ica->lend_count = ica->mapping_lend_count = ica->orphaned = 0;
    ica->return_depth = ica->attached_count = ica->delivery = 0;
    ica->device_frame = 0;
    memset(ica->returns, 0, sizeof ica->returns);
    ica->state = ICA_HELD;
    if (!ica_paste(process, ica)) {
        ica->state = ICA_FREE;
        return -E_NO_MEMORY;
    }
    return (long)ica_id_of(ica);
}

long ica_services_device_block(uint32_t pid, uint64_t physical)
{
    struct process *process = process_find(pid);
    if (process == NULL)
        return -E_NOT_FOUND;
    if (process->blocks_allocated >= ICA_BLOCKS_PER_PROCESS)
        return -E_BUSY;
    long share = authority_ica_allows(process, ICA_KIND_BLOCK);
    if (share != 0)
        return share;
    struct ica *ica = free_slot(ICA_KIND_BLOCK);
    if (ica == NULL)
        return -E_BUSY;
    ica->physical = physical;
    ica->pages = 1;
    ica->lent_count = ica->lend_count = ica->mapping_lend_count = ica->orphaned = 0;
    ica->allocator = pid;
    ica->return_depth = ica->attached_count = ica->delivery = 0;
    memset(ica->returns, 0, sizeof ica->returns);
    ica->device_frame = 1;
    ica->state = ICA_HELD;
    if (!ica_paste(process, ica)) {
        ica->device_frame = 0;
        ica->state = ICA_FREE;
        return -E_NO_MEMORY;
    }
    process->blocks_allocated++;
    ica->counted = COUNTED_AS_DEVICE_BLOCK;
    return (long)ica_id_of(ica);
}

/* Gives the slot back, keeping its frames (they now belong to someone else). */
void ica_services_forget(struct ica *ica)
{
    struct process *allocator = process_find(ica->allocator);
    uint64_t bytes = (uint64_t)ica->pages * PAGE_SIZE;
    bool memory = ica->counted == COUNTED_AS_ICA || ica->counted == COUNTED_AS_BLOCK;
    if (memory && allocator != NULL && allocator->ica_bytes >= bytes) {
        allocator->ica_bytes -= bytes;
        allocator->memory_bytes -= bytes;
    }
    if (ica->counted == COUNTED_AS_ICA && allocator != NULL && allocator->icas_allocated > 0)
        allocator->icas_allocated--;
    if (ica->counted == COUNTED_AS_ICA && ica->kind == ICA_KIND_CONTROL && allocator != NULL &&
        allocator->controls_allocated > 0)
        allocator->controls_allocated--;
    if ((ica->counted == COUNTED_AS_BLOCK || ica->counted == COUNTED_AS_DEVICE_BLOCK) &&
        allocator != NULL && allocator->blocks_allocated > 0)
        allocator->blocks_allocated--;
    ica->generation++;
    ica->owner = ica->destination = ica->allocator = 0;
    ica->counted = 0;
    ica->state = ICA_FREE;
}

/* Gives the slot and its frames back; the ICA must be mapped nowhere. A
 * device block's frame is the driver's persistent memory: only the slot goes. */
static void release(struct ica *ica)
{
    if (!ica->device_frame)
        physical_free(ica->physical, ica->pages);
    ica->device_frame = 0;
    ica_services_forget(ica);
}

void ica_services_free_held(struct process *process, uint64_t id)
{
    struct ica *ica = ica_lookup(id);
    if (ica == NULL || ica->state != ICA_HELD || ica->owner != process->pid)
        return;
    ica_peel(process, ica);
    release(ica);
}

/* Frees a control ICA mapped nowhere, with the data ICAs travelling with it. */
static void discard_attached_and(struct ica *control)
{
    ica_end_lends(NULL, control);
    for (uint32_t i = 0; i < control->attached_count; i++) {
        struct ica *data = ica_lookup(control->attached[i]);
        if (data != NULL && data->state == ICA_TRAVELLING)
            release(data);
    }
    release(control);
}

/* A travelling control ICA nobody will receive. */
static void discard(uint64_t id)
{
    struct ica *control = ica_lookup(id);
    if (control != NULL && control->state == ICA_TRAVELLING)
        discard_attached_and(control);
}

/* A lent data ICA whose lender ended: freed once nobody sees it any more. */
static void free_orphan(uint64_t id)
{
    struct ica *ica = ica_lookup(id);
    if (ica != NULL && ica->orphaned && ica->lend_count == 0)
        release(ica);
}

static long free_travelling(uint64_t id)
{
    struct ica *ica = ica_lookup(id);
    if (ica == NULL || ica->state != ICA_TRAVELLING || ica->destination != 0)
        return -E_INVALID;
    release(ica);
    return 0;
}

static long prepare_tables(uint32_t pid, uint64_t address, uint64_t bytes)
{
    struct process *process = process_find(pid);
    uint64_t end = address + bytes;
    bool in_control = address >= ICA_CONTROL_BASE &&
                      end <= ICA_CONTROL_BASE + (uint64_t)ICA_CONTROL_SLOTS * PAGE_SIZE;
    bool in_data = address >= ICA_DATA_BASE &&
                   end <= ICA_DATA_BASE + (uint64_t)ICA_DATA_SLOTS * ICA_DATA_MAX_BYTES;
    in_data = in_data || (address >= ICA_BLOCK_BASE &&
                          end <= ICA_BLOCK_BASE + (uint64_t)ICA_BLOCK_SLOTS * PAGE_SIZE);
    if (process == NULL || end < address || !(in_control || in_data))
        return -E_INVALID;
    return paging_prepare_tables(process->root, address, bytes) ? 0 : -E_NO_MEMORY;
}

/* A slot's request rings are allocated at its first registration and kept for
 * good: a requester on another core that looked the server up just before it
 * ended may still push into them (send_to_server then reports the request
 * undelivered, and serve_ica_undelivered answers it). */
static long allocate_rings(struct server_entry *slot)
{
    uint32_t stride = (uint32_t)((ring_bytes(ICA_RING_SLOTS, sizeof(uint64_t)) + 63) & ~63ul);
    uint64_t bytes = (uint64_t)stride * kernel_shared->core_count * 2; /* rings, then lanes */
    uint64_t rings = physical_allocate((bytes + PAGE_SIZE - 1) / PAGE_SIZE, 0);
    if (rings == 0)
        return -E_NO_MEMORY;
    kernel_shared->ring_frames += (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    slot->ring_stride = stride;
    slot->rings = phys_to_virt(rings);
    return 0;
}

static bool slot_is(const struct server_entry *slot, const char *name, uint32_t instance)
{
    return slot->name[0] != '\0' && strncmp(slot->name, name, SERVER_NAME_BYTES) == 0 &&
           slot->instance == instance;
}

/* Whether some instance of the name in `slot` is registered now. */
static bool name_has_registered_instance(const struct server_entry *slot)
{
    struct ica_pools *pools = kernel_shared->icas;
    for (uint32_t i = 0; i < SERVER_SLOTS; i++)
        if (pools->servers[i].pid != 0 &&
            strncmp(pools->servers[i].name, slot->name, SERVER_NAME_BYTES) == 0)
            return true;
    return false;
}

/* The slot for instance `instance` of `name`: the one it had before (its
 * restart keeps its rings and its place in lookups), else one never used,
 * else a vacant one of a name none of whose instances is registered, else
 * any vacant one; -E_BUSY (as *error) when that instance or the pid is
 * registered already, or no slot is left. */
static struct server_entry *choose_slot(uint32_t pid, const char *name, uint32_t instance,
                                        long *error)
{
    struct ica_pools *pools = kernel_shared->icas;
    struct server_entry *own = NULL, *unused = NULL, *forgotten = NULL, *vacant = NULL;
    for (uint32_t i = 0; i < SERVER_SLOTS; i++) {
        struct server_entry *slot = &pools->servers[i];
        if (slot->pid != 0) {
            if (slot->pid == pid || slot_is(slot, name, instance)) {
                *error = -E_BUSY;
                return NULL;
            }
            continue;
        }
        if (slot_is(slot, name, instance))
            own = slot;
        else if (slot->name[0] == '\0')
            unused = unused != NULL ? unused : slot;
        else if (forgotten == NULL && !name_has_registered_instance(slot))
            forgotten = slot;
        else
            vacant = vacant != NULL ? vacant : slot;
    }
    struct server_entry *slot = own != NULL         ? own
                                : unused != NULL    ? unused
                                : forgotten != NULL ? forgotten
                                                    : vacant;
    if (slot == NULL)
        *error = -E_BUSY;
    return slot;
}

/* Gives `slot` its identity inside an odd version (server_registry.c's
 * readers never see half of it). */
static void name_slot(struct server_entry *slot, const char *name, uint32_t instance, uint32_t core)
{
    if (slot_is(slot, name, instance) && slot->core == core)
        return;
    atomic_store_fenced(&slot->version, slot->version + 1);
    strncpy(slot->name, name, SERVER_NAME_BYTES - 1);
    slot->name[SERVER_NAME_BYTES - 1] = '\0';
    if (!slot_is(slot, name, instance))
        slot->registrations = 0;
    slot->instance = instance;
    slot->core = core;
    atomic_store_release(&slot->version, slot->version + 1);
}

static long register_server(uint32_t pid, const char *name, uint32_t instance)
{
    struct process *process = process_find(pid);
    long allowed = process == NULL ? -E_NOT_FOUND : authority_check_name(process, name);
    if (allowed == 0 && instance >= SERVER_INSTANCES_MAX)
        allowed = -E_INVALID;
    if (allowed != 0) {
        kprintf("ica: pid %u may not register '%s' (instance %u): %s\n", pid, name, instance,
                error_text(allowed));
        return allowed;
    }
    long error = 0;
    struct server_entry *slot = choose_slot(pid, name, instance, &error);
    if (slot == NULL)
        return error;
    error = slot->rings == NULL ? allocate_rings(slot) : 0;
    if (error != 0)
        return error;
    slot->next_core = 0;
    uint64_t before = slot_is(slot, name, instance) ? slot->requests_before + slot->taken : 0;
    atomic_store_release(&slot->requests_before, before);
    slot->pushed = slot->lane_pushed = 0;
    slot->taken = slot->lane_taken = 0;
    slot->next_lane = 0;
    for (uint32_t core = 0; core < kernel_shared->core_count; core++) {
        ring_init(server_ring(slot, core), ICA_RING_SLOTS, sizeof(uint64_t));
        ring_init(server_lane(slot, core), ICA_RING_SLOTS, sizeof(uint64_t));
    }
    name_slot(slot, name, instance, process->core);
    slot->registrations++;
    atomic_store_release(&slot->pid, pid);
    if (instance == 0)
        kprintf("ica: server '%s' registered (pid %u)\n", slot->name, pid);
    else
        kprintf("ica: server '%s' instance %u registered (pid %u, core %u)\n", slot->name, instance,
                pid, process->core);
    return 0;
}

/* A request the ended server never answered goes back with -E_SERVER_ENDED
 * (the requester may retry with the restarted server), with the data ICAs
 * that came with it. */
static void return_unanswered(struct process *server, uint32_t server_pid, struct ica *control)
{
    ((struct ica_control *)phys_to_virt(control->physical))->result = -E_SERVER_ENDED;
    if (control->return_depth == 0) {
        discard_attached_and(control);
        return;
    }
    uint32_t target = ica_route_pop(control);
    ica_end_lends(server, control);
    for (uint32_t i = 0; i < control->attached_count; i++) {
        struct ica *data = ica_lookup(control->attached[i]);
        if (data == NULL)
            continue;
        if (server != NULL && data->state == ICA_HELD && data->owner == server_pid)
            ica_peel(server, data);
        data->state = ICA_TRAVELLING;
        data->destination = target;
    }
    control->sender = server_pid;
    control->delivery = ICA_AS_RESULT;
    control->destination = target;
    control->state = ICA_TRAVELLING;
    ica_deliver_result(target, ica_id_of(control));
}

static void unregister_server(uint32_t pid)
{
    struct server_entry *server = server_of_pid(pid);
    if (server == NULL)
        return;
    const struct process *process = process_find(pid);
    if (process != NULL) /* its count of requests handed without the rings outlives it */
        __atomic_add_fetch(&server->requests_before, process->requests_handed, __ATOMIC_RELAXED);
    atomic_store_release(&server->pid, 0);
    memory_fence(); /* before the scan of travelling requests: see send_to_server */
    ica_room_announce_all(server, pid); /* senders waiting for room find it gone */
}

void serve_ica_undelivered(const struct intercore_message *message,
                           const struct intercore_ica_undelivered_request *request)
{
    (void)message;
    struct ica *control = ica_lookup(request->control);
    if (control == NULL || control->state != ICA_TRAVELLING || control->delivery != ICA_AS_REQUEST)
        return; /* answered already, or taken */
    uint32_t pid = control->destination;
    struct process *server = process_find(pid);
    if (server != NULL && server->state != PROCESS_ZOMBIE && server_of_pid(pid) != NULL)
        return; /* the server is alive and will take it */
    kprintf("ica: a request reached server pid %u after it ended: answered -E_SERVER_ENDED\n", pid);
    return_unanswered(server, pid, control);
}

/* What ica_release_process does with a control ICA `process` (`pid`) holds
 * or that travels to it. */
static void release_control(struct process *process, uint32_t pid, struct ica *ica)
{
    bool held = ica->state == ICA_HELD && ica->owner == pid;
    bool coming = ica->state == ICA_TRAVELLING && ica->destination == pid;
    if (held) {
        ica_end_lends(process, ica);
        ica_peel(process, ica);
    }
    if ((held || coming) && ica->delivery == ICA_AS_REQUEST)
        return_unanswered(process, pid, ica);
    else if (coming)
        discard_attached_and(ica);
    else if (held)
        release(ica);
}

/* What it does with a data or block ICA `process` (`pid`) holds. */
static void release_data(struct process *process, uint32_t pid, struct ica *ica)
{
    if (ica->state != ICA_HELD || ica->owner != pid)
        return;
    ica_peel(process, ica);
    /* Orphaned before the count is read: a borrower's core ending the last
     * lend meanwhile sees the mark and has it freed (ica_end_lends), else
     * this sees its count at 0 (both may: free_orphan finds it gone). */
    atomic_store_fenced(&ica->orphaned, 1);
    if (atomic_load_acquire(&ica->lend_count) == 0)
        release(ica);
}

/* Only slots below each pool's reach can hold a live ICA; a slot whose
 * owner and destination both name another pid is none of this process's
 * (the two loads come first: they reject almost every slot). */
void ica_release_process(struct process *process)
{
    struct ica_pools *pools = kernel_shared->icas;
    uint32_t pid = process->pid;
    unregister_server(pid);
    /* Control ICAs first: a request carries its data ICAs back with it. */
    for (uint32_t i = 0; i < pools->control_reach; i++)
        if (pools->control[i].owner == pid || pools->control[i].destination == pid)
            release_control(process, pid, &pools->control[i]);
    for (uint32_t i = 0; i < pools->data_reach; i++)
        if (pools->data[i].owner == pid)
            release_data(process, pid, &pools->data[i]);
    for (uint32_t i = 0; i < pools->block_reach; i++)
        if (pools->block[i].owner == pid)
            release_data(process, pid, &pools->block[i]);
}

void serve_ica_allocate(const struct intercore_message *message,
                        const struct intercore_ica_allocate_request *request,
                        struct intercore_ica_allocate_reply *reply)
{
    (void)message;
    reply->id = ica_services_allocate((uint32_t)request->pid, request->kind, request->bytes);
}

void serve_ica_free(const struct intercore_message *message,
                    const struct intercore_ica_free_request *request,
                    struct intercore_ica_free_reply *reply)
{
    (void)message;
    reply->result = free_travelling(request->id);
}

void serve_ica_discard(const struct intercore_message *message,
                       const struct intercore_ica_discard_request *request)
{
    (void)message;
    discard(request->control);
}

void serve_ica_free_orphan(const struct intercore_message *message,
                           const struct intercore_ica_free_orphan_request *request)
{
    (void)message;
    free_orphan(request->id);
}

void serve_ica_tables(const struct intercore_message *message,
                      const struct intercore_ica_tables_request *request,
                      struct intercore_ica_tables_reply *reply)
{
    (void)message;
    reply->result = prepare_tables((uint32_t)request->pid, request->address, request->bytes);
}

void serve_server_register(const struct intercore_message *message,
                           const struct intercore_server_register_request *request,
                           struct intercore_server_register_reply *reply)
{
    (void)message;
    reply->result =
        register_server((uint32_t)request->pid, (const char *)request->name, request->instance);
}
