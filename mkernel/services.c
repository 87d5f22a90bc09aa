/* services.c: the m-kernel's services. They run only on the m-kernel's core
 * (requests from p-kernel cores arrive over the inter-core area), so the
 * frame allocator, page tables and process slots need no lock. */
#include "services.h"
#include "address_space.h"
#include "atomic.h"
#include "authority.h"
#include "console.h"
#include "device_memory.h"
#include "fpu_area.h"
#include "file_region_services.h"
#include "ica_services.h"
#include "initrd.h"
#include "pager_services.h"
#include "process_copy.h"
#include "published_regions.h"
#include "profile_mark.h"
#include "layout.h"
#include "paging.h"
#include "physical_memory.h"
#include "process.h"
#include "program_loader.h"
#include "scheduler.h"
#include "shared.h"
#include "shutdown.h"
#include "panic.h"
#include <formica/errors.h>
#include <formica/protocol/mkernel_services.h>
#include <string.h>

#define LARGEST_FRAME_REQUEST 4096 /* 16 MiB */

void process_first_entry(void);

static const uint8_t *initrd_bytes;
static uint64_t initrd_size;
static uint32_t next_pid = 1;

void services_init(const struct boot_module *initrd)
{
    uint64_t bytes = PROCESS_SLOTS * sizeof(struct process);
    uint64_t table = physical_allocate((bytes + PAGE_SIZE - 1) / PAGE_SIZE, 0);
    if (table == 0 || !ica_services_init() || !file_region_services_init())
        panic("services: no memory for the process table and ICA pools");
    kernel_shared->processes = phys_to_virt(table);
    if (initrd != NULL) {
        initrd_bytes = phys_to_virt(initrd->start);
        initrd_size = initrd->end - initrd->start;
    }
}

const uint8_t *services_boot_file(const char *name, uint64_t *size)
{
    struct initrd_file file;
    if (initrd_bytes == NULL)
        return NULL;
    int error = initrd_find(initrd_bytes, initrd_size, name, &file);
    if (error == -E_INVALID)
        kprintf("services: the boot image is corrupt (looking for %s)\n", name);
    if (error != 0)
        return NULL;
    *size = file.size;
    return file.data;
}

static struct process *take_slot(void)
{
    for (uint32_t tries = 0; tries < PROCESS_SLOTS; tries++, next_pid++) {
        if (next_pid == 0)
            next_pid = 1;
        struct process *process = &kernel_shared->processes[next_pid % PROCESS_SLOTS];
        if (process->state == PROCESS_FREE) {
            memset(process, 0, sizeof(*process));
            process->pid = next_pid++;
            return process;
        }
    }
    return NULL;
}

/* Which account the slot's process counts in (0: none), for
 * account_memory.c's sums. */
static void note_slot_account(const struct process *process, uint32_t account)
{
    atomic_store_release(&kernel_shared->slot_accounts[process - kernel_shared->processes],
                         account);
}

static void release_slot(struct process *process)
{
    note_slot_account(process, 0);
    memset(process, 0, sizeof(*process));
}

/* The kernel stack of a new process: a switch frame that returns into
 * process_first_entry, then the trap frame that enters user mode. */
static void prepare_first_entry(struct process *process, const struct loaded_program *program)
{
    struct trap_frame *frame = (struct trap_frame *)(process_kernel_stack_top(process)) - 1;
    memset(frame, 0, sizeof(*frame));
    frame->rip = program->entry;
    frame->cs = SEGMENT_USER_CODE | 3;
    frame->rflags = 0x202; /* interrupts on */
    frame->rsp = program->stack_pointer;
    frame->ss = SEGMENT_USER_DATA | 3;
    frame->rdi = program->argc;
    frame->rsi = program->argv;
    if (cpu_feature_has(kernel_shared->cpu.used, CPU_FEATURE_AVX))
        frame->rdx = START_WIDE_VECTORS;
    uint64_t *switch_frame = (uint64_t *)frame - 7;
    memset(switch_frame, 0, 7 * sizeof(uint64_t));
    switch_frame[6] = (uint64_t)process_first_entry;
    process->saved_rsp = (uint64_t)switch_frame;
    fpu_area_prepare(process->fpu_state);
}

static void hand_to_core(struct process *process)
{
    if (process->core == MKERNEL_CORE)
        scheduler_adopt(process);
    else
        scheduler_send_to_owner(MESSAGE_PROCESS_ADOPT, process);
}

long services_spawn(const struct spawn_request *request, uint32_t parent)
{
    char path[NAME_BYTES + 8] = "bin/";
    uint64_t size = 0;
    strncpy(path + 4, request->program, NAME_BYTES);
    const uint8_t *file = services_boot_file(path, &size);
    if (file == NULL)
        return -E_NOT_FOUND;
    struct process *parent_process = process_find(parent);
    if (parent != 0 && parent_process == NULL)
        return -E_NOT_FOUND;
    long allowed = device_spawn_check(request->flags, parent);
    if (allowed == 0)
        allowed = authority_check_spawn(request, parent_process);
    if (allowed != 0)
        return allowed;
    struct process *process = take_slot();
    if (process == NULL)
        return -E_BUSY;
    struct loaded_program program;
    long error = program_load(file, size, request->program, request->arguments, &program);
    if (error == 0 && ica_prepare_process(program.root) != 0) {
        address_space_destroy(program.root);
        error = -E_NO_MEMORY;
    }
    uint64_t stack = error == 0 ? physical_allocate(PROCESS_KERNEL_STACK_PAGES, 0) : 0;
    if (error == 0 && stack == 0) {
        address_space_destroy(program.root);
        error = -E_NO_MEMORY;
    }
    if (error != 0) {
        release_slot(process);
        return error;
    }
    ring_init(&process->results.ring, RESULT_RING_SLOTS, sizeof(uint64_t));
    strncpy(process->name, request->program, NAME_BYTES - 1);
    process->core = request->core;
    process->priority = request->priority;
    process->parent = parent;
    process->restarts = parent == 1 ? request->restarts : 0;
    process->root = program.root;
    process->kernel_stack_base = (uint64_t)phys_to_virt(stack);
    process->heap_start = process->heap_end = program.heap_start;
    process->memory_bytes = program.memory_bytes;
    authority_start(process, request, parent_process);
    prepare_first_entry(process, &program);
    device_process_start(process, request->flags);
    note_slot_account(process, process->account);
    process->state = PROCESS_READY;
    profile_note_program(process->pid, process->core, process->name);
    hand_to_core(process);
    return process->pid;
}

static long grow_heap(uint32_t pid, uint64_t bytes)
{
    struct process *process = process_find(pid);
    if (process == NULL)
        return -E_NOT_FOUND;
    uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    if (bytes > USER_PROGRAM_END || pages * PAGE_SIZE > USER_PROGRAM_END - process->heap_end)
        return -E_NO_MEMORY;
    if (!authority_memory_allows(process, pages * PAGE_SIZE))
        return -E_QUOTA;
    long error = address_space_map_new(process->root, process->heap_end, pages, 1);
    if (error != 0)
        return error;
    uint64_t old_end = process->heap_end;
    process->heap_end += pages * PAGE_SIZE;
    process->memory_bytes += pages * PAGE_SIZE;
    return (long)old_end;
}

static void free_if_done(struct process *process)
{
    if (process->resources_released &&
        (process->collected || process->parent == 0 || process->adopted))
        release_slot(process);
}

/* The children of an ended process go to init, which nobody makes wait for
 * them: an adopted process's slot is freed as soon as it ends. */
static void orphan_children(uint32_t pid)
{
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        struct process *child = &kernel_shared->processes[slot];
        if (child->state != PROCESS_FREE && child->parent == pid && pid != INIT_PID) {
            child->parent = INIT_PID;
            child->adopted = true;
            free_if_done(child);
        }
    }
}

static void release_exited(uint32_t pid)
{
    struct process *process = process_find(pid);
    if (process == NULL || process->state != PROCESS_ZOMBIE || process->resources_released)
        return;
    file_region_services_release(process); /* BLK's blocks out of its tables first */
    ica_release_process(process);
    device_process_end(process);
    address_space_destroy(process->root);
    published_regions_release(pid); /* its pages are unmapped: the frames may go */
    physical_free(virt_to_phys((void *)process->kernel_stack_base), PROCESS_KERNEL_STACK_PAGES);
    process->root = 0;
    process->memory_bytes = 0;
    process->resources_released = true;
    orphan_children(pid);
    if (process_find(process->parent) == NULL)
        process->parent = 0;
    free_if_done(process);
}

static void collect(uint32_t pid)
{
    struct process *process = process_find(pid);
    if (process == NULL || process->state != PROCESS_ZOMBIE)
        return;
    process->collected = true;
    free_if_done(process);
}

static int64_t allocate_for_core(uint64_t frames)
{
    if (frames == 0 || frames > LARGEST_FRAME_REQUEST)
        return 0;
    return (int64_t)physical_allocate(frames, 0);
}

void serve_memory_allocate(const struct intercore_message *message,
                           const struct intercore_memory_allocate_request *request,
                           struct intercore_memory_allocate_reply *reply)
{
    (void)message;
    reply->physical = (uint64_t)allocate_for_core(request->frames);
}

void serve_process_spawn(const struct intercore_message *message,
                         const struct intercore_process_spawn_request *request,
                         struct intercore_process_spawn_reply *reply)
{
    (void)message;
    reply->pid =
        services_spawn((const struct spawn_request *)request->request, (uint32_t)request->parent);
}

void serve_process_grow(const struct intercore_message *message,
                        const struct intercore_process_grow_request *request,
                        struct intercore_process_grow_reply *reply)
{
    (void)message;
    reply->old_end = grow_heap((uint32_t)request->pid, request->bytes);
}

void serve_process_exited(const struct intercore_message *message,
                          const struct intercore_process_exited_request *request)
{
    (void)message;
    release_exited((uint32_t)request->pid);
}

void serve_process_collect(const struct intercore_message *message,
                           const struct intercore_process_collect_request *request,
                           struct intercore_process_collect_reply *reply)
{
    (void)message, (void)reply;
    collect((uint32_t)request->pid);
}

void serve_power_off(const struct intercore_message *message,
                     const struct intercore_power_off_request *request,
                     struct intercore_power_off_reply *reply)
{
    (void)message, (void)reply;
    shutdown_machine((uint32_t)request->status);
}

void services_handle(const struct intercore_message *request, struct intercore_message *reply)
{
    if (!intercore_serve(request, reply))
        kprintf("services: unknown request %u from core %u\n", request->type, request->from);
}

static const struct intercore_services mkernel_services = {intercore_serve,
                                                           intercore_is_notification};

void services_install(void)
{
    intercore_install_services(&mkernel_services);
}
