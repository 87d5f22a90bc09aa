/* published_regions.c: the m-kernel's published regions
 * (formica/published_region.h): per server name, frames that instance 0
 * maps writable and the name's other instances read-only, at
 * PUBLISHED_REGION_BASE. Tagged PAGE_DEVICE, so a holder's end unmaps them
 * without freeing the frames; the last holder's end frees them. Each
 * holder's mapping counts in its memory (within its account's limit), and
 * an account other than init's makes at most its share of the slots, so no
 * program can map past its quota or take the slots a server needs. */
#include "published_regions.h"
#include "authority.h"
#include "clock.h"
#include "console.h"
#include "ica/ica.h"
#include "intercore.h"
#include "layout.h"
#include "paging.h"
#include "physical_memory.h"
#include "process.h"
#include "shared.h"
#include "x86.h"
#include <format.h>
#include <formica/errors.h>
#include <formica/log_limit.h>
#include <formica/published_region.h>
#include <formica/syscalls.h>
#include <string.h>

#define PUBLISHED_WRITER_FLAGS (PAGE_USER | PAGE_WRITABLE | PAGE_DEVICE)
#define PUBLISHED_READER_FLAGS (PAGE_USER | PAGE_DEVICE)
#define PUBLISHED_HOLDERS 64 /* = SERVER_INSTANCES_MAX */

struct published_region {
    char name[PUBLISHED_NAME_BYTES];
    uint64_t physical; /* 0: the slot is free */
    uint64_t pages;
    uint32_t account;                    /* of the process that made it: its share counts it */
    uint32_t holders[PUBLISHED_HOLDERS]; /* pids it is mapped into; 0: none */
};

static struct published_region regions[PUBLISHED_REGIONS];

_Static_assert(PUBLISHED_NAME_BYTES == SERVER_NAME_BYTES,
               "a published region is named by a server");

/* The instance index `pid` is registered under `name` with, or -1. */
static long registered_instance(uint32_t pid, const char *name)
{
    const struct server_entry *server = server_of_pid(pid);
    if (server == NULL || strncmp(server->name, name, SERVER_NAME_BYTES) != 0)
        return -1;
    return server->instance;
}

static struct published_region *find_or_take(const char *name)
{
    struct published_region *free_slot = NULL;
    for (uint32_t i = 0; i < PUBLISHED_REGIONS; i++) {
        if (regions[i].physical != 0 && strcmp(regions[i].name, name) == 0)
            return &regions[i];
        if (regions[i].physical == 0 && free_slot == NULL)
            free_slot = &regions[i];
    }
    return free_slot;
}

static long allocate(struct published_region *region, const char *name, uint64_t pages,
                     uint32_t account)
{
    uint64_t physical = physical_allocate(pages, 0);
    if (physical == 0)
        return -E_NO_MEMORY;
    memset(phys_to_virt(physical), 0, pages * PAGE_SIZE);
    memset(region, 0, sizeof *region);
    strncpy(region->name, name, PUBLISHED_NAME_BYTES - 1);
    region->physical = physical;
    region->pages = pages;
    region->account = account;
    return 0;
}

/* Whether `account` may make one more region: init's always (the slots the
 * clients' share leaves are its); another account while it has made fewer
 * than PUBLISHED_ACCOUNT_REGIONS and all such accounts together fewer than
 * PUBLISHED_CLIENT_REGIONS. *own: the regions it has made. */
static bool share_allows(uint32_t account, uint32_t *own)
{
    uint32_t clients = 0;
    *own = 0;
    for (uint32_t i = 0; i < PUBLISHED_REGIONS; i++) {
        if (regions[i].physical == 0 || regions[i].account == INIT_PID)
            continue;
        clients++;
        *own += regions[i].account == account;
    }
    return account == INIT_PID ||
           (*own < PUBLISHED_ACCOUNT_REGIONS && clients < PUBLISHED_CLIENT_REGIONS);
}

static void free_if_unheld(struct published_region *region)
{
    for (uint32_t i = 0; i < PUBLISHED_HOLDERS; i++)
        if (region->holders[i] != 0)
            return;
    physical_free(region->physical, region->pages);
    kprintf("published: region '%s' freed with its last holder\n", region->name);
    memset(region, 0, sizeof *region);
}

/* Whether `pid` holds `region`. */
static bool holds(const struct published_region *region, uint32_t pid)
{
    for (uint32_t i = 0; i < PUBLISHED_HOLDERS; i++)
        if (region->holders[i] == pid)
            return true;
    return false;
}

/* A free holder place in `region`, or NULL. */
static uint32_t *free_holder_place(struct published_region *region)
{
    for (uint32_t i = 0; i < PUBLISHED_HOLDERS; i++)
        if (region->holders[i] == 0)
            return &region->holders[i];
    return NULL;
}

static long map_region(struct process *process, const struct published_region *region,
                       uint64_t flags)
{
    for (uint64_t i = 0; i < region->pages; i++) {
        uint64_t address = PUBLISHED_REGION_BASE + i * PAGE_SIZE;
        uint64_t *entry = paging_find_entry(process->root, address);
        if (entry != NULL && (*entry & PAGE_PRESENT))
            return -E_BUSY; /* something is mapped there already */
        if (paging_map_page(process->root, address, region->physical + i * PAGE_SIZE, flags) != 0)
            return -E_NO_MEMORY; /* what was mapped stays until the process ends */
    }
    return (long)PUBLISHED_REGION_BASE;
}

/* The refusal, logged at most LOG_LIMIT_PER_SECOND times a second per pid. */
static long refuse(const char *name, uint32_t pid, const char *why, long error)
{
    static struct log_limit limit; /* the m-kernel's core only */
    uint64_t held_back = 0;
    if (log_limit_allow(&limit, pid, clock_cycles_to_us(rdtsc()), &held_back))
        kprintf("published: pid %u refused region '%s': %s (%lu more not shown)\n", pid, name, why,
                held_back);
    return error;
}

static long refuse_share(const char *name, const struct process *process, uint32_t own)
{
    char why[120];
    format_string(why, sizeof why,
                  "its account %u made %u regions, an account's share (%u of %u; %u for all but "
                  "init's)",
                  process->account, own, PUBLISHED_ACCOUNT_REGIONS, PUBLISHED_REGIONS,
                  PUBLISHED_CLIENT_REGIONS);
    return refuse(name, process->pid, why, -E_QUOTA);
}

static long refuse_memory(const char *name, const struct process *process, uint64_t bytes)
{
    char why[120];
    format_string(why, sizeof why, "%lu KiB more would take its account %u past its memory limit",
                  bytes / 1024, process->account);
    return refuse(name, process->pid, why, -E_QUOTA);
}

long published_region_map(const char *name, uint32_t pid, uint64_t bytes)
{
    struct process *process = process_find(pid);
    if (process == NULL)
        return -E_NOT_FOUND;
    long instance = registered_instance(pid, name);
    if (instance < 0)
        return refuse(name, pid, "not registered as an instance of that server", -E_PERMISSION);
    uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    if (name[0] == '\0' || bytes == 0 || bytes > PUBLISHED_REGION_MAX_BYTES)
        return refuse(name, pid, "size 0 or above PUBLISHED_REGION_MAX_BYTES", -E_INVALID);
    struct published_region *region = find_or_take(name);
    if (region == NULL)
        return refuse(name, pid, "every published region slot is taken", -E_BUSY);
    bool fresh = region->physical == 0;
    if (!fresh && region->pages != pages)
        return refuse(name, pid, "a size unlike the region's", -E_INVALID);
    if (!fresh && holds(region, pid))
        return refuse(name, pid, "mapped already", -E_BUSY);
    uint32_t own;
    if (fresh && !share_allows(process->account, &own))
        return refuse_share(name, process, own);
    if (!authority_memory_allows(process, pages * PAGE_SIZE))
        return refuse_memory(name, process, pages * PAGE_SIZE);
    if (fresh) {
        long error = allocate(region, name, pages, process->account);
        if (error != 0)
            return refuse(name, pid, "no memory for it", error);
    }
    uint32_t *place = free_holder_place(region);
    if (place == NULL)
        return refuse(name, pid, "too many holders", -E_BUSY);
    /* Before the map: what a failed map left is released, and its charge
     * ends, with the process (release_exited). */
    *place = pid;
    process->memory_bytes += pages * PAGE_SIZE;
    return map_region(process, region,
                      instance == 0 ? PUBLISHED_WRITER_FLAGS : PUBLISHED_READER_FLAGS);
}

void published_regions_release(uint32_t pid)
{
    for (uint32_t r = 0; r < PUBLISHED_REGIONS; r++) {
        struct published_region *region = &regions[r];
        if (region->physical == 0)
            continue;
        bool held = false;
        for (uint32_t i = 0; i < PUBLISHED_HOLDERS; i++) {
            if (region->holders[i] == pid) {
                region->holders[i] = 0;
                held = true;
            }
        }
        if (held)
            free_if_unheld(region);
    }
}

void serve_published_region(const struct intercore_message *message,
                            const struct intercore_published_region_request *request,
                            struct intercore_published_region_reply *reply)
{
    (void)message;
    reply->address =
        published_region_map((const char *)request->name, (uint32_t)request->pid, request->bytes);
}
