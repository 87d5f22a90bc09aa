/* device_memory.c: maps device registers (uncached, tagged PAGE_DEVICE so
 * address_space_destroy never frees them), persistent memory (write-back,
 * tagged the same way) and DMA memory (contiguous frames mapped as ordinary
 * user pages, freed with the address space) into drivers. */
#include "device_memory.h"
#include "atomic.h"
#include "address_space.h"
#include "console.h"
#include "device_state.h"
#include "ioapic.h"
#include "layout.h"
#include "paging.h"
#include "persistent_memory.h"
#include "physical_memory.h"
#include "shared.h"
#include "translation_stamp.h"
#include "trap.h"
#include <formica/errors.h>
#include <formica/syscalls.h>

#define INTERRUPT_CONTROLLERS_START 0xfec00000ull /* IOAPIC, HPET, local APIC */
#define INTERRUPT_CONTROLLERS_END 0xff000000ull
#define PHYSICAL_LIMIT (1ull << 52)
#define DMA_BELOW (4ull << 30) /* 32-bit devices can reach it */
#define RFLAGS_IOPL_3 (3ull << 12)
#define DEVICE_PAGE_FLAGS                                                                          \
    (PAGE_USER | PAGE_WRITABLE | PAGE_CACHE_DISABLE | PAGE_WRITE_THROUGH | PAGE_DEVICE)
/* Persistent memory is memory: write-back (PAT entry 0), its users order
 * durability with the flush layer (docs/design.md, "The flush layer"). */
#define PERSISTENT_PAGE_FLAGS (PAGE_USER | PAGE_WRITABLE | PAGE_DEVICE)

long device_spawn_check(uint32_t flags, uint32_t parent)
{
    if (flags & ~SPAWN_FLAGS_ALL)
        return -E_INVALID;
    if (flags == 0 || parent == INIT_PID)
        return 0;
    const struct device_process *record = device_process_of(process_find(parent));
    if (record == NULL || !(record->flags & SPAWN_GRANT_DRIVER))
        return -E_PERMISSION;
    return 0;
}

void device_process_start(struct process *process, uint32_t flags)
{
    if (kernel_shared->devices == NULL)
        return;
    struct device_process *record =
        &kernel_shared->devices->processes[process->pid % PROCESS_SLOTS];
    *record = (struct device_process){.pid = process->pid,
                                      .flags = flags,
                                      .gsi = DEVICE_NO_GSI,
                                      .window_next = DEVICE_WINDOW_BASE};
    if (flags & SPAWN_DRIVER) {
        struct trap_frame *frame = (struct trap_frame *)process_kernel_stack_top(process) - 1;
        frame->rflags |= RFLAGS_IOPL_3;
    }
}

/* Frees the line `pid` owns, masked (the process has ended). */
static void irq_release(uint32_t pid)
{
    struct device_state *devices = kernel_shared->devices;
    if (devices == NULL)
        return;
    for (uint32_t gsi = 0; gsi < DEVICE_LINES; gsi++) {
        if (devices->lines[gsi].owner_pid != pid)
            continue;
        if (gsi < DEVICE_GSI_LIMIT)
            ioapic_set_masked(gsi, true); /* an MSI slot has no pin: its device stays as set */
        devices->lines[gsi].pending = 0;
        devices->lines[gsi].ends_ica_wait = 0;
        atomic_store_release(&devices->lines[gsi].owner_pid, 0);
    }
}

void device_process_end(struct process *process)
{
    struct device_process *record = device_process_of(process);
    if (record == NULL)
        return;
    irq_release(process->pid);
    record->pid = 0;
}

static bool overlaps(uint64_t base, uint64_t end, uint64_t start, uint64_t stop)
{
    return base < stop && start < end;
}

static bool mappable_device_range(uint64_t base, uint64_t end)
{
    if (end <= base || end > PHYSICAL_LIMIT)
        return false;
    if (overlaps(base, end, INTERRUPT_CONTROLLERS_START, INTERRUPT_CONTROLLERS_END))
        return false;
    uint64_t lapic = virt_to_phys((void *)kernel_shared->lapic_mmio) & ~(PAGE_SIZE - 1);
    if (overlaps(base, end, lapic, lapic + PAGE_SIZE))
        return false;
    return !physical_is_memory(base, end - base);
}

/* Takes `pages` pages of the record's window; 0 when it is full. */
static uint64_t take_window(struct device_process *record, uint64_t pages)
{
    uint64_t address = record->window_next;
    if (pages > (DEVICE_WINDOW_END - address) / PAGE_SIZE)
        return 0;
    record->window_next += pages * PAGE_SIZE;
    return address;
}

static void unmap_pages(uint64_t root, uint64_t address, uint64_t pages)
{
    for (uint64_t i = 0; i < pages; i++)
        paging_unmap_page(root, address + i * PAGE_SIZE);
    translations_dropped_everywhere();
}

static long map_pages(uint64_t root, uint64_t address, uint64_t physical, uint64_t pages,
                      uint64_t flags)
{
    for (uint64_t i = 0; i < pages; i++) {
        if (paging_map_page(root, address + i * PAGE_SIZE, physical + i * PAGE_SIZE, flags) != 0) {
            unmap_pages(root, address, i);
            return -E_NO_MEMORY;
        }
    }
    return 0;
}

/* Remembers persistent memory `pid` mapped, for SYS_ICA_DEVICE_BLOCK; a
 * piece that continues one it has (device_map_whole's) extends it. */
static void record_persistent(struct device_process *record, uint32_t pid, uint64_t base,
                              uint64_t end)
{
    for (uint32_t i = 0; i < record->persistent_count; i++) {
        if (base <= record->persistent_end[i] && end >= record->persistent_base[i]) {
            if (base < record->persistent_base[i])
                record->persistent_base[i] = base;
            if (end > record->persistent_end[i])
                record->persistent_end[i] = end;
            return;
        }
    }
    if (record->persistent_count == DEVICE_PERSISTENT_MAPS) {
        kprintf("nvm: pid %u has %u persistent-memory mappings: 0x%lx cannot back block ICAs\n",
                pid, DEVICE_PERSISTENT_MAPS, base);
        return;
    }
    record->persistent_base[record->persistent_count] = base;
    record->persistent_end[record->persistent_count] = end;
    record->persistent_count++;
}

static long device_map(uint32_t pid, uint64_t physical, uint64_t bytes)
{
    struct process *process = process_find(pid);
    struct device_process *record = device_process_of(process);
    if (record == NULL)
        return -E_NOT_FOUND;
    if (bytes == 0 || bytes > DEVICE_MAP_LIMIT || physical > PHYSICAL_LIMIT)
        return -E_INVALID;
    uint64_t base = physical & ~(uint64_t)(PAGE_SIZE - 1);
    uint64_t end = (physical + bytes + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    if (!mappable_device_range(base, end))
        return -E_INVALID;
    uint64_t pages = (end - base) / PAGE_SIZE;
    uint64_t address = take_window(record, pages);
    if (address == 0)
        return -E_NO_MEMORY;
    bool persistent = persistent_memory_holds(base, end);
    long error = map_pages(process->root, address, base, pages,
                           persistent ? PERSISTENT_PAGE_FLAGS : DEVICE_PAGE_FLAGS);
    if (error != 0)
        return error;
    if (persistent) {
        kprintf("nvm: pid %u maps persistent memory 0x%lx (%lu KiB) write-back\n", pid, base,
                (end - base) >> 10);
        record_persistent(record, pid, base, end);
    }
    return (long)(address + (physical - base));
}

bool device_maps_persistent(uint32_t pid, uint64_t physical)
{
    const struct device_process *record = device_process_of(process_find(pid));
    if (record == NULL)
        return false;
    for (uint32_t i = 0; i < record->persistent_count; i++)
        if (physical >= record->persistent_base[i] && physical < record->persistent_end[i])
            return true;
    return false;
}

static long dma_allocate(uint32_t pid, uint64_t bytes, uint64_t *physical, uint64_t *rounded)
{
    struct process *process = process_find(pid);
    struct device_process *record = device_process_of(process);
    if (record == NULL)
        return -E_NOT_FOUND;
    if (bytes == 0 || bytes > DMA_LIMIT_BYTES)
        return -E_INVALID;
    uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    if (record->dma_bytes + pages * PAGE_SIZE > DMA_LIMIT_BYTES)
        return -E_NO_MEMORY;
    uint64_t frames = physical_allocate(pages, DMA_BELOW);
    if (frames == 0)
        return -E_NO_MEMORY;
    uint64_t address = take_window(record, pages);
    long error = address == 0
                     ? -E_NO_MEMORY
                     : map_pages(process->root, address, frames, pages, PAGE_USER | PAGE_WRITABLE);
    if (error != 0) {
        physical_free(frames, pages);
        return error;
    }
    record->dma_bytes += pages * PAGE_SIZE;
    process->memory_bytes += pages * PAGE_SIZE;
    *physical = frames;
    *rounded = pages * PAGE_SIZE;
    return (long)address;
}

void serve_device_map(const struct intercore_message *message,
                      const struct intercore_device_map_request *request,
                      struct intercore_device_map_reply *reply)
{
    (void)message;
    reply->address = device_map((uint32_t)request->pid, request->physical, request->bytes);
}

void serve_dma_allocate(const struct intercore_message *message,
                        const struct intercore_dma_allocate_request *request,
                        struct intercore_dma_allocate_reply *reply)
{
    (void)message;
    reply->address =
        dma_allocate((uint32_t)request->pid, request->bytes, &reply->physical, &reply->bytes);
}
