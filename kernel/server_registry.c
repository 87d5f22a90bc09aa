/* server_registry.c: reads of the server table (kernel/ica/ica.h) from any
 * core, without a lock: each slot's identity is read inside its version
 * (the m-kernel makes it odd while it rewrites a slot for another name), so
 * a reader never mixes two names. */
#include "server_registry.h"
#include "atomic.h"
#include "cpu.h"
#include "ica/ica.h"
#include "instance_choice.h"
#include "process.h"
#include "shared.h"
#include "x86.h"
#include <formica/protocol/servers.h>
#include <string.h>

/* One slot's identity as read at one moment. */
struct slot_view {
    char name[SERVER_NAME_BYTES];
    uint32_t instance, core, pid, registrations;
    uint64_t taken;
};

/* Requests the process `pid` took without its rings (process.h); a
 * statistic its own core keeps, read without ordering. */
static uint64_t handed_to(uint32_t pid)
{
    const struct process *process = &kernel_shared->processes[pid % PROCESS_SLOTS];
    if (pid == 0 || process->pid != pid)
        return 0;
    return __atomic_load_n(&process->requests_handed, __ATOMIC_RELAXED);
}

static void read_slot(const struct server_entry *slot, struct slot_view *view)
{
    for (;;) {
        uint32_t version = atomic_load_acquire(&slot->version);
        if (version & 1) {
            cpu_relax();
            continue;
        }
        memcpy(view->name, slot->name, SERVER_NAME_BYTES);
        view->instance = slot->instance;
        view->core = slot->core;
        view->registrations = slot->registrations;
        view->pid = atomic_load_acquire(&slot->pid);
        view->taken = __atomic_load_n(&slot->taken, __ATOMIC_RELAXED) +
                      __atomic_load_n(&slot->requests_before, __ATOMIC_RELAXED) +
                      handed_to(view->pid);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (atomic_load_acquire(&slot->version) == version)
            return;
    }
}

static bool names_match(const struct slot_view *view, const char *name)
{
    return view->name[0] != '\0' && strncmp(view->name, name, SERVER_NAME_BYTES) == 0;
}

_Static_assert(SERVER_INSTANCES_MAX == 64, "a name's instances are bits of a uint64_t");

/* The instances of `name`, indexed by instance; returns the mask of the
 * indexes it has. */
static uint64_t collect(const char *name, struct server_instance_info *found)
{
    struct ica_pools *pools = kernel_shared->icas;
    uint64_t present = 0;
    for (uint32_t i = 0; i < SERVER_SLOTS; i++) {
        struct slot_view view;
        read_slot(&pools->servers[i], &view);
        if (!names_match(&view, name) || view.instance >= SERVER_INSTANCES_MAX ||
            (present >> view.instance & 1))
            continue;
        found[view.instance] = (struct server_instance_info){.index = view.instance,
                                                             .pid = view.pid,
                                                             .core = view.core,
                                                             .registered = view.registrations,
                                                             .taken = view.taken};
        present |= 1ull << view.instance;
    }
    return present;
}

static uint32_t socket_of_core(uint32_t core)
{
    return core < kernel_shared->core_count ? kernel_shared->cpus[core].socket : 0;
}

/* The instances the placement gives `name`, when it gives it several: the
 * choice then rests on the placement alone, so a caller reaches the same
 * instance while the others are still starting. 0 when the placement names
 * one instance or does not name `name` (a server spawned by hand). */
static uint32_t placed_instances(const char *name, struct instance_place *places)
{
    static const char *const keys[PLACEMENT_SERVERS] = {PLACEMENT_SERVER_KEYS};
    const struct placement_info *placement = &kernel_shared->placement;
    for (uint32_t server = 0; server < PLACEMENT_SERVERS; server++) {
        uint32_t count = placement->server_instance_count[server];
        if (strncmp(keys[server], name, SERVER_NAME_BYTES) != 0)
            continue;
        if (count <= 1 || count > SERVER_INSTANCES_MAX)
            return 0;
        for (uint32_t index = 0; index < count; index++)
            places[index] = (struct instance_place){
                .index = index, .core = placement->server_instance_cores[server][index]};
        return count;
    }
    return 0;
}

/* The registered instances of `name` as places; their count. */
static uint32_t registered_instances(uint64_t present, const struct server_instance_info *found,
                                     struct instance_place *places)
{
    uint32_t count = 0;
    for (uint32_t index = 0; index < SERVER_INSTANCES_MAX; index++)
        if (present >> index & 1)
            places[count++] = (struct instance_place){.index = index, .core = found[index].core};
    return count;
}

uint32_t server_pid_nearest(const char *name, uint32_t core)
{
    struct server_instance_info found[SERVER_INSTANCES_MAX];
    struct instance_place places[SERVER_INSTANCES_MAX];
    uint64_t present = collect(name, found);
    if (present == 0)
        return 0;
    uint32_t count = placed_instances(name, places);
    if (count == 0)
        count = registered_instances(present, found, places);
    uint32_t index = places[instance_choose(places, count, core, socket_of_core)].index;
    return present >> index & 1 ? found[index].pid : 0;
}

uint32_t server_pid_of_instance(const char *name, uint32_t index)
{
    struct ica_pools *pools = kernel_shared->icas;
    for (uint32_t i = 0; i < SERVER_SLOTS; i++) {
        struct slot_view view;
        read_slot(&pools->servers[i], &view);
        if (names_match(&view, name) && view.instance == index && view.pid != 0)
            return view.pid;
    }
    return 0;
}

uint32_t server_instances_describe(const char *name, struct server_instance_info *out,
                                   uint32_t room)
{
    struct server_instance_info found[SERVER_INSTANCES_MAX];
    uint64_t present = collect(name, found);
    uint32_t known = 0;
    for (uint32_t index = 0; index < SERVER_INSTANCES_MAX; index++) {
        if (!(present >> index & 1))
            continue;
        if (known < room)
            out[known] = found[index];
        known++;
    }
    return known;
}
