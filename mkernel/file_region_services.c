/* file_region_services.c: the m-kernel's side of file regions (mmap,
 * docs/mmap.md): a region's record in its process, its control ICA (one
 * per process, for every region's faults) and its page tables, built whole
 * at creation so the faulting core only writes leaf entries; the table of
 * mapping lends, allocated at boot; and the end of every lend of an ended
 * process before its address space goes. */
#include "file_region_services.h"
#include "atomic.h"
#include "clock.h"
#include "console.h"
#include "authority.h"
#include "ica/ica.h"
#include "ica/mapping_lend.h"
#include "ica_services.h"
#include "layout.h"
#include "paging.h"
#include "physical_memory.h"
#include "shared.h"
#include "translation_stamp.h"
#include "x86.h"
#include <formica/errors.h>
#include <formica/log_limit.h>
#include "intercore.h"
#include <string.h>

_Static_assert(ENTRY_NOT_A_FRAME == PAGE_DEVICE,
               "a mapping lend is never freed with its mapper's address space");
_Static_assert(FILE_REGION_BASE >= USER_PROGRAM_END &&
                   FILE_REGION_BASE + FILE_REGION_WINDOW_BYTES <= ICA_CONTROL_BASE,
               "the file region window lies between the pager's region and the ICA windows");
_Static_assert(FILE_REGION_BASE % (1ull << 39) == 0 && FILE_REGION_WINDOW_BYTES == 1ull << 39,
               "the window is one root entry of its own");

#define REGION_GAP PAGE_SIZE /* an unmapped page after each region */

bool file_region_services_init(void)
{
    uint64_t bytes = MAPPING_LENDS * sizeof(struct mapping_lend);
    uint64_t table = physical_allocate((bytes + PAGE_SIZE - 1) / PAGE_SIZE, 0);
    if (table == 0)
        return false;
    memset(phys_to_virt(table), 0, bytes);
    kernel_shared->mapping_lends = phys_to_virt(table);
    return true;
}

/* Whether [base, base + bytes) meets a region of the process, or comes
 * within `gap` bytes of one. */
static bool overlaps(const struct process *process, uint64_t base, uint64_t bytes, uint64_t gap)
{
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++) {
        const struct file_region *region = &process->file_regions[i];
        if (region->bytes != 0 && base < region->base + region->bytes + gap &&
            region->base < base + bytes + gap)
            return true;
    }
    return false;
}

static bool inside_window(uint64_t base, uint64_t bytes)
{
    return base >= FILE_REGION_BASE && base % PAGE_SIZE == 0 &&
           bytes <= FILE_REGION_BASE + FILE_REGION_WINDOW_BYTES - base;
}

/* A MAP_FIXED base: inside the window, page-aligned, over no region (the
 * library unmapped what was there first; it may touch its neighbours, as
 * on Linux). A refusal is logged, at most LOG_LIMIT_PER_SECOND a second a
 * pid. */
static bool fixed_base_fits(const struct process *process, uint64_t base, uint64_t bytes)
{
    const char *why = base % PAGE_SIZE != 0               ? "not page-aligned"
                      : !inside_window(base, bytes)       ? "not inside the mmap window"
                      : overlaps(process, base, bytes, 0) ? "over another region"
                                                          : NULL;
    static struct log_limit limit; /* the m-kernel's core only */
    uint64_t held_back = 0;
    if (why != NULL &&
        log_limit_allow(&limit, process->pid, clock_cycles_to_us(rdtsc()), &held_back))
        kprintf("file region: pid %u: MAP_FIXED at 0x%lx (%lu bytes) refused: %s "
                "(the window is [0x%lx, 0x%lx); %lu more not shown)\n",
                process->pid, base, bytes, why, (uint64_t)FILE_REGION_BASE,
                (uint64_t)(FILE_REGION_BASE + FILE_REGION_WINDOW_BYTES), held_back);
    return why == NULL;
}

/* Where a region of `bytes` goes: the fixed base asked for, or the lowest
 * free place of the window followed by an unmapped page (a region's place,
 * and its page tables, are used again after its munmap); 0 when there is
 * none. */
static uint64_t choose_base(struct process *process, uint64_t asked, uint64_t bytes, bool fixed)
{
    if (fixed)
        return fixed_base_fits(process, asked, bytes) ? asked : 0;
    uint64_t base = FILE_REGION_BASE;
    for (bool moved = true; moved && inside_window(base, bytes);) {
        moved = false;
        for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++) {
            const struct file_region *region = &process->file_regions[i];
            if (region->bytes != 0 && base < region->base + region->bytes + REGION_GAP &&
                region->base < base + bytes + REGION_GAP) {
                base = region->base + region->bytes + REGION_GAP; /* past the one in the way */
                moved = true;
            }
        }
    }
    return inside_window(base, bytes) ? base : 0;
}

/* The region's page tables, charged to the process's account (they stay
 * until its exit, for the next region in the same place): 0, -E_QUOTA or
 * -E_NO_MEMORY. */
static long prepare_tables(struct process *process, uint64_t base, uint64_t bytes)
{
    uint64_t at_most = (bytes / (512 * PAGE_SIZE) + 2) * PAGE_SIZE; /* a leaf table a 2 MiB */
    if (!authority_memory_allows(process, at_most))
        return -E_QUOTA;
    uint64_t before = kernel_shared->table_frames;
    bool built = paging_prepare_tables(process->root, base, bytes);
    process->memory_bytes += (kernel_shared->table_frames - before) * PAGE_SIZE;
    return built ? 0 : -E_NO_MEMORY;
}

static struct file_region *free_slot(struct process *process)
{
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++)
        if (process->file_regions[i].bytes == 0)
            return &process->file_regions[i];
    return NULL;
}

static long create(const struct intercore_file_region_request *request)
{
    struct process *process = process_find(request->pid);
    if (process == NULL || process->root == 0)
        return -E_NOT_FOUND;
    if (server_of_pid(request->fs) == NULL)
        return -E_NOT_FOUND;
    struct file_region *region = free_slot(process);
    if (region == NULL)
        return -E_BUSY;
    bool fixed = (request->flags & FILE_REGION_FIXED) != 0;
    uint64_t base = choose_base(process, request->address, request->bytes, fixed);
    if (base == 0)
        return fixed ? -E_INVALID : -E_NO_MEMORY;
    if (process->file_region_control == 0) {
        long control = ica_services_allocate(process->pid, ICA_KIND_CONTROL, PAGE_SIZE);
        if (control < 0)
            return control;
        process->file_region_control = (uint64_t)control;
    }
    long error = prepare_tables(process, base, request->bytes);
    if (error != 0)
        return error;
    *region = (struct file_region){
        .base = base,
        .bytes = request->bytes,
        .offset = request->offset,
        .handle = request->handle,
        .fs = request->fs,
        .flags = (uint32_t)request->flags,
        .mapping = ++process->file_region_mappings,
    };
    return (long)base;
}

void serve_file_region(const struct intercore_message *message,
                       const struct intercore_file_region_request *request,
                       struct intercore_file_region_reply *reply)
{
    (void)message;
    reply->result = create(request);
}

/* A frame of the process's own, charged to its account: a copy of
 * `source`, or zeroes. */
static long private_frame(uint32_t pid, uint64_t source)
{
    struct process *process = process_find(pid);
    if (process == NULL || process->root == 0)
        return -E_NOT_FOUND;
    if (!authority_memory_allows(process, PAGE_SIZE))
        return -E_QUOTA;
    uint64_t frame = physical_allocate(1, 0);
    if (frame == 0)
        return -E_NO_MEMORY;
    if (source != 0)
        memcpy(phys_to_virt(frame), phys_to_virt(source), PAGE_SIZE);
    else
        memset(phys_to_virt(frame), 0, PAGE_SIZE);
    process->memory_bytes += PAGE_SIZE;
    return (long)frame;
}

void serve_file_region_copy(const struct intercore_message *message,
                            const struct intercore_file_region_copy_request *request,
                            struct intercore_file_region_copy_reply *reply)
{
    (void)message;
    reply->result = private_frame((uint32_t)request->pid, request->source);
}

/* Frames of the process's own in [address, address + bytes) (private
 * copies, a hole's zeroes) go back to the allocator. */
static void free_own_frames(struct process *process, uint64_t address, uint64_t bytes)
{
    for (uint64_t offset = 0; offset < bytes; offset += PAGE_SIZE) {
        uint64_t *entry = paging_find_entry(process->root, address + offset);
        if (entry == NULL || !(*entry & PAGE_PRESENT) || (*entry & PAGE_DEVICE))
            continue;
        physical_free(paging_unmap_page(process->root, address + offset), 1);
        process->memory_bytes -= PAGE_SIZE;
    }
    translations_dropped(process);
}

/* The region of `process` that holds all of [address, address + bytes),
 * or NULL. */
static struct file_region *region_holding(struct process *process, uint64_t address, uint64_t bytes)
{
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++) {
        struct file_region *region = &process->file_regions[i];
        if (region->bytes != 0 && address >= region->base &&
            address - region->base < region->bytes &&
            bytes <= region->bytes - (address - region->base))
            return region;
    }
    return NULL;
}

/* Whether a region of the process is a part of mmap number `mapping`. */
static bool mapping_has_parts(const struct process *process, uint64_t mapping)
{
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++) {
        const struct file_region *region = &process->file_regions[i];
        if (region->bytes != 0 && region->mapping == mapping)
            return true;
    }
    return false;
}

/* The region's record with [address, address + bytes) cut out: forgotten,
 * its head or its tail kept, or both (the tail then in `tail_slot`, a free
 * one), each part at its own file offset with the same handle, flags and
 * mapping number. */
static void cut_record(struct file_region *region, uint64_t address, uint64_t bytes,
                       struct file_region *tail_slot)
{
    struct file_region_cut cut =
        file_region_cut(region->base, region->bytes, address, address + bytes);
    struct file_region tail = *region;
    tail.base = cut.tail_base;
    tail.bytes = cut.tail_bytes;
    tail.offset = region->offset + (cut.tail_base - region->base);
    tail.last_fault = 0;
    if (cut.head_bytes != 0) {
        region->bytes = cut.head_bytes;
        if (cut.tail_bytes != 0)
            *tail_slot = tail;
    } else {
        *region = cut.tail_bytes != 0 ? tail : (struct file_region){0};
    }
}

static void end_range(const struct intercore_file_region_end_request *request,
                      struct intercore_file_region_end_reply *reply)
{
    struct process *process = process_find((uint32_t)request->pid);
    struct file_region *region = process != NULL && process->root != 0
                                     ? region_holding(process, request->address, request->bytes)
                                     : NULL;
    if (region == NULL || request->address % PAGE_SIZE != 0 || request->bytes == 0 ||
        request->bytes % PAGE_SIZE != 0) {
        reply->result = -E_INVALID;
        return;
    }
    bool middle = request->address > region->base &&
                  request->address + request->bytes < region->base + region->bytes;
    struct file_region *tail_slot = middle ? free_slot(process) : NULL;
    if (middle && tail_slot == NULL) {
        reply->result = -E_BUSY; /* nothing changed */
        return;
    }
    free_own_frames(process, request->address, request->bytes);
    struct file_region ended = *region;
    cut_record(region, request->address, request->bytes, tail_slot);
    reply->result = 0;
    reply->handle = ended.handle;
    reply->last = mapping_has_parts(process, ended.mapping) ? 0 : 1;
}

void serve_file_region_end(const struct intercore_message *message,
                           const struct intercore_file_region_end_request *request,
                           struct intercore_file_region_end_reply *reply)
{
    (void)message;
    end_range(request, reply);
}

void serve_file_region_drop(const struct intercore_message *message,
                            const struct intercore_file_region_drop_request *request,
                            struct intercore_file_region_drop_reply *reply)
{
    (void)message;
    struct process *process = process_find((uint32_t)request->pid);
    if (process == NULL || process->root == 0 || request->address % PAGE_SIZE != 0 ||
        request->bytes % PAGE_SIZE != 0 ||
        region_holding(process, request->address, request->bytes) == NULL) {
        reply->result = -E_INVALID;
        return;
    }
    free_own_frames(process, request->address, request->bytes);
    reply->result = 0;
}

void file_region_services_release(struct process *process)
{
    if (atomic_load_acquire(&process->mapping_lends) > 0)
        mapping_lends_end(process, FILE_REGION_BASE, FILE_REGION_WINDOW_BYTES);
    memset(process->file_regions, 0, sizeof(process->file_regions));
    process->file_region_control = 0;
}
