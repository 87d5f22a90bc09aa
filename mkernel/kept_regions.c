/* kept_regions.c: the m-kernel's kept regions (formica/kept_region.h): per
 * server name, frames that outlive the server's process, mapped at
 * KEPT_REGION_BASE into whichever process of that name asks. The pages are
 * tagged PAGE_DEVICE so that the process's end unmaps them without freeing
 * the frames. Only a server that init started may ask, only for its own
 * name (or its instance's, NAME.i), and only while no live process holds
 * the name's region. */
#include "kept_regions.h"
#include "authority.h"
#include "console.h"
#include "intercore.h"
#include "layout.h"
#include "paging.h"
#include "physical_memory.h"
#include "process.h"
#include "shared.h"
#include <formica/errors.h>
#include <formica/kept_region.h>
#include <formica/syscalls.h>
#include <string.h>

#define KEPT_PAGE_FLAGS (PAGE_USER | PAGE_WRITABLE | PAGE_DEVICE)

struct kept_region {
    char name[KEPT_NAME_BYTES];
    uint64_t physical; /* 0: the slot is free */
    uint64_t pages;
    uint32_t holder; /* the pid it is mapped into now, 0 for none */
};

static struct kept_region regions[KEPT_REGIONS];

static struct kept_region *find_or_take(const char *name)
{
    struct kept_region *free_slot = NULL;
    for (uint32_t i = 0; i < KEPT_REGIONS; i++) {
        if (regions[i].physical != 0 && strcmp(regions[i].name, name) == 0)
            return &regions[i];
        if (regions[i].physical == 0 && free_slot == NULL)
            free_slot = &regions[i];
    }
    return free_slot;
}

static bool held_by_live_process(const struct kept_region *region, uint32_t asker)
{
    const struct process *holder = process_find(region->holder);
    return holder != NULL && holder->pid != asker && holder->state != PROCESS_ZOMBIE;
}

static long map_region(struct process *process, const struct kept_region *region)
{
    for (uint64_t i = 0; i < region->pages; i++) {
        uint64_t address = KEPT_REGION_BASE + i * PAGE_SIZE;
        if (paging_find_entry(process->root, address) != NULL &&
            (*paging_find_entry(process->root, address) & PAGE_PRESENT))
            return -E_BUSY; /* mapped already */
        if (paging_map_page(process->root, address, region->physical + i * PAGE_SIZE,
                            KEPT_PAGE_FLAGS) != 0)
            return -E_NO_MEMORY; /* what was mapped stays until the process ends */
    }
    return (long)KEPT_REGION_BASE;
}

static long allocate(struct kept_region *region, const char *name, uint64_t pages)
{
    uint64_t physical = physical_allocate(pages, 0);
    if (physical == 0)
        return -E_NO_MEMORY;
    memset(phys_to_virt(physical), 0, pages * PAGE_SIZE);
    strncpy(region->name, name, KEPT_NAME_BYTES - 1);
    region->physical = physical;
    region->pages = pages;
    return 0;
}

long kept_region_map(const char *name, uint32_t pid, uint64_t bytes)
{
    struct process *process = process_find(pid);
    if (process == NULL)
        return -E_NOT_FOUND;
    if (process->parent != 1 || process->priority != PRIORITY_SERVER)
        return -E_PERMISSION; /* servers that init started only */
    if (authority_check_kept_name(process, name) != 0) {
        kprintf("kept: pid %u (%s) may not map kept region '%s'\n", pid, process->name, name);
        return -E_PERMISSION; /* its own name, or its instance's NAME.i */
    }
    uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    if (name[0] == '\0' || bytes == 0 || bytes > KEPT_REGION_MAX_BYTES)
        return -E_INVALID;
    struct kept_region *region = find_or_take(name);
    if (region == NULL)
        return -E_BUSY;
    if (region->physical != 0 && region->pages != pages)
        return -E_INVALID;
    if (region->physical != 0 && held_by_live_process(region, pid))
        return -E_BUSY;
    if (region->physical == 0) {
        long error = allocate(region, name, pages);
        if (error != 0)
            return error;
    }
    long address = map_region(process, region);
    if (address >= 0)
        region->holder = pid;
    return address;
}

void serve_kept_region(const struct intercore_message *message,
                       const struct intercore_kept_region_request *request,
                       struct intercore_kept_region_reply *reply)
{
    (void)message;
    reply->address =
        kept_region_map((const char *)request->name, (uint32_t)request->pid, request->bytes);
}
