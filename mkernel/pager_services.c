/* pager_services.c: pager regions and the block operations of the pager.
 * A block is a physically contiguous run of frames, so a swapped-out block
 * can become a data ICA and a fetched data ICA can become a block without a
 * copy. Frames mapped into a process count in its account's memory and are
 * refused (-E_QUOTA) past the account's limit. The target process must be
 * waiting (for its fault or its request);
 * a removed translation bumps its stamp, so it resumes with a CR3 reload
 * (kernel/translation_stamp.h) and no core keeps a stale translation. */
#include "pager_services.h"
#include "acpi.h"
#include "address_space.h"
#include "authority.h"
#include "console.h"
#include "ica/ica.h"
#include "ica_services.h"
#include "layout.h"
#include "paging.h"
#include "physical_memory.h"
#include "shared.h"
#include "translation_stamp.h"
#include <formica/errors.h>
#include <formica/pager.h>
#include <string.h>

_Static_assert(sizeof(((struct process *)0)->pager_name) == SERVER_NAME_BYTES,
               "a process keeps its pager's whole name");

#define ACCESSED_BIT 0x20ull
#define DIRTY_BIT 0x40ull

static long create_region(uint32_t pid, uint32_t pager_pid, uint64_t bytes)
{
    struct process *process = process_find(pid);
    if (process == NULL)
        return -E_NOT_FOUND;
    const struct server_entry *pager = server_of_pid(pager_pid);
    if (pager == NULL)
        return -E_NOT_FOUND;
    if (bytes == 0 || bytes > PAGER_REGION_MAX_BYTES || (bytes & (PAGE_SIZE - 1)) != 0)
        return -E_INVALID;
    if (process->pager != 0)
        return -E_BUSY;
    long control = ica_services_allocate(pid, ICA_KIND_CONTROL, PAGE_SIZE);
    if (control < 0)
        return control;
    process->pager_control = (uint64_t)control;
    process->pager_base = PAGER_REGION_BASE;
    process->pager_bytes = bytes;
    process->pager = pager_pid;
    memcpy(process->pager_name, pager->name, SERVER_NAME_BYTES);
    return (long)PAGER_REGION_BASE;
}

/* What MESSAGE_PAGER_MAP, _UNMAP and _SCAN share: whose block, asked by which pager. */
struct block_request {
    uint64_t pager, pid, address, bytes;
};

/* The process whose block the pager wants, checked: region, alignment, waiting. */
static long block_target(const struct block_request *block, struct process **out)
{
    struct process *process = process_find((uint32_t)block->pid);
    uint64_t address = block->address, bytes = block->bytes;
    if (process == NULL)
        return -E_NOT_FOUND;
    if (process->pager != (uint32_t)block->pager)
        return -E_PERMISSION;
    if (bytes == 0 || bytes > PAGER_BLOCK_MAX_BYTES || ((address | bytes) & (PAGE_SIZE - 1)) != 0 ||
        address < process->pager_base ||
        address + bytes > process->pager_base + process->pager_bytes)
        return -E_INVALID;
    /* Only while it waits for an ICA (its fault or a request): a process
     * blocked elsewhere (wait, sleep, console) may write its own memory when
     * it wakes, and that memory must not change under the kernel. */
    if (process->state != PROCESS_WAITING || process->wait_reason != WAIT_ICA)
        return -E_BUSY;
    *out = process;
    return 0;
}

/* Physical base of the block when every page is present and contiguous, else 0. */
static uint64_t contiguous_block(struct process *process, uint64_t address, uint64_t pages,
                                 uint64_t *flags_union)
{
    uint64_t first = 0;
    for (uint64_t i = 0; i < pages; i++) {
        uint64_t *entry = paging_find_entry(process->root, address + i * PAGE_SIZE);
        if (entry == NULL || !(*entry & PAGE_PRESENT))
            return 0;
        uint64_t physical = *entry & PAGE_ADDRESS_MASK;
        if (i == 0)
            first = physical;
        else if (physical != first + i * PAGE_SIZE)
            return 0;
        if (flags_union != NULL)
            *flags_union |= *entry;
    }
    return first;
}

static long map_block(const struct block_request *block, uint64_t ica_id)
{
    struct process *process;
    long error = block_target(block, &process);
    uint64_t address = block->address, bytes = block->bytes, pages = bytes / PAGE_SIZE;
    if (error != 0)
        return error;
    for (uint64_t i = 0; i < pages; i++)
        if (paging_translate(process->root, address + i * PAGE_SIZE) != 0)
            return -E_BUSY; /* already resident */
    if (!authority_memory_allows(process, bytes))
        return -E_QUOTA; /* the client's account pays for its frames: the pager evicts first */
    uint64_t physical;
    if (ica_id != 0) {
        struct ica *ica = ica_lookup(ica_id);
        if (ica == NULL || ica->state != ICA_TRAVELLING || ica->destination != 0 ||
            ica->pages != pages)
            return -E_INVALID;
        physical = ica->physical;
    } else if ((physical = physical_allocate(pages, 0)) == 0) {
        return -E_NO_MEMORY;
    }
    for (uint64_t i = 0; i < pages; i++) {
        if (paging_map_page(process->root, address + i * PAGE_SIZE, physical + i * PAGE_SIZE,
                            PAGE_USER | PAGE_WRITABLE) != 0) {
            for (uint64_t j = 0; j < i; j++)
                paging_unmap_page(process->root, address + j * PAGE_SIZE);
            translations_dropped(process);
            if (ica_id == 0)
                physical_free(physical, pages);
            return -E_NO_MEMORY;
        }
    }
    if (ica_id != 0)
        ica_services_forget(ica_lookup(ica_id)); /* its frames now belong to the process */
    process->memory_bytes += bytes;
    return 0;
}

static long unmap_block(const struct block_request *block, bool keep)
{
    struct process *process;
    long error = block_target(block, &process);
    uint64_t address = block->address, bytes = block->bytes, pages = bytes / PAGE_SIZE;
    if (error != 0)
        return error;
    uint64_t physical = contiguous_block(process, address, pages, NULL);
    if (physical == 0)
        return -E_INVALID;
    long id = 0;
    if (keep && (id = ica_services_adopt((uint32_t)block->pager, physical, pages)) < 0)
        return id;
    for (uint64_t i = 0; i < pages; i++)
        paging_unmap_page(process->root, address + i * PAGE_SIZE);
    translations_dropped(process);
    if (!keep)
        physical_free(physical, pages);
    process->memory_bytes -= bytes;
    return id;
}

static long scan_block(const struct block_request *block, uint64_t flags)
{
    struct process *process;
    long error = block_target(block, &process);
    uint64_t address = block->address, pages = block->bytes / PAGE_SIZE;
    if (error != 0)
        return error;
    long bits = PAGER_SCAN_PRESENT;
    for (uint64_t i = 0; i < pages; i++) {
        uint64_t *entry = paging_find_entry(process->root, address + i * PAGE_SIZE);
        if (entry == NULL || !(*entry & PAGE_PRESENT)) {
            bits &= ~(long)PAGER_SCAN_PRESENT;
            continue;
        }
        if (*entry & ACCESSED_BIT)
            bits |= PAGER_SCAN_ACCESSED;
        if (*entry & DIRTY_BIT)
            bits |= PAGER_SCAN_DIRTY;
        if (flags & PAGER_SCAN_CLEAR_ACCESSED)
            *entry &= ~ACCESSED_BIT;
    }
    if ((flags & PAGER_SCAN_CLEAR_ACCESSED) && (bits & PAGER_SCAN_ACCESSED))
        translations_dropped(process); /* a cached translation would not set the bit again */
    return bits;
}

/* Ends the caller's region: every resident page of it and its control ICA. */
static long release_region(uint32_t pid)
{
    struct process *process = process_find(pid);
    if (process == NULL || process->pager == 0)
        return -E_INVALID;
    for (uint64_t offset = 0; offset < process->pager_bytes; offset += PAGE_SIZE) {
        uint64_t frame = paging_unmap_page(process->root, process->pager_base + offset);
        if (frame != 0) {
            physical_free(frame, 1);
            process->memory_bytes -= PAGE_SIZE;
        }
    }
    translations_dropped(process);
    ica_services_free_held(process, process->pager_control);
    process->pager = 0;
    process->pager_bytes = 0;
    return 0;
}

static long copy_firmware_table(uint32_t pid, uint64_t signature, uint64_t buffer, uint64_t size)
{
    struct process *process = process_find(pid);
    char name[4];
    memcpy(name, &signature, 4);
    const struct acpi_header *table = acpi_find_table(name, 0);
    if (process == NULL || table == NULL)
        return -E_NOT_FOUND;
    if (table->length > size)
        return -E_TOO_BIG;
    long error = address_space_write(process->root, buffer, table, table->length);
    return error != 0 ? error : (long)table->length;
}

void serve_pager_region(const struct intercore_message *message,
                        const struct intercore_pager_region_request *request,
                        struct intercore_pager_region_reply *reply)
{
    (void)message;
    reply->result = create_region((uint32_t)request->pid, (uint32_t)request->pager, request->bytes);
}

void serve_pager_map(const struct intercore_message *message,
                     const struct intercore_pager_map_request *request,
                     struct intercore_pager_map_reply *reply)
{
    (void)message;
    struct block_request block = {request->pager, request->pid, request->address, request->bytes};
    reply->result = map_block(&block, request->ica);
}

void serve_pager_unmap(const struct intercore_message *message,
                       const struct intercore_pager_unmap_request *request,
                       struct intercore_pager_unmap_reply *reply)
{
    (void)message;
    struct block_request block = {request->pager, request->pid, request->address, request->bytes};
    reply->result = unmap_block(&block, request->keep != 0);
}

void serve_pager_scan(const struct intercore_message *message,
                      const struct intercore_pager_scan_request *request,
                      struct intercore_pager_scan_reply *reply)
{
    (void)message;
    struct block_request block = {request->pager, request->pid, request->address, request->bytes};
    reply->result = scan_block(&block, request->flags);
}

void serve_pager_release(const struct intercore_message *message,
                         const struct intercore_pager_release_request *request,
                         struct intercore_pager_release_reply *reply)
{
    (void)message;
    reply->result = release_region((uint32_t)request->pid);
}

void serve_firmware_table(const struct intercore_message *message,
                          const struct intercore_firmware_table_request *request,
                          struct intercore_firmware_table_reply *reply)
{
    (void)message;
    reply->result = copy_firmware_table((uint32_t)request->pid, request->signature, request->buffer,
                                        request->size);
}
