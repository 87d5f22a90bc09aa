/* shutdown.c: asks every p-kernel core at once to halt and waits until each
 * has cleared its `online` flag; a core that does not stop in time is named,
 * and the run then counts as failed. All at once, not one after the other:
 * 255 cores under TCG on a busy host did not all answer one-second calls. */
#include "shutdown.h"
#include "atomic.h"
#include "console.h"
#include "intercore.h"
#include "panic.h"
#include "shared.h"
#include "x86.h"

#define HALT_WAIT_MS 1000        /* at least */
#define HALT_WAIT_PER_CORE_MS 50 /* and this much per core beyond */

static bool is_online(uint32_t core)
{
    return atomic_load_acquire(&kernel_shared->cpus[core].online) != 0;
}

static uint32_t cores_still_online(void)
{
    uint32_t count = 0;
    for (uint32_t core = FIRST_PKERNEL_CORE; core < kernel_shared->core_count; core++)
        count += is_online(core);
    return count;
}

/* MESSAGE_HALT is a notification: no reply, the core's online flag is the answer. */
static void ask_all_to_halt(void)
{
    for (uint32_t core = FIRST_PKERNEL_CORE; core < kernel_shared->core_count; core++) {
        if (!is_online(core))
            continue;
        struct intercore_message request = {.type = MESSAGE_HALT};
        intercore_send_urgent(core, &request);
    }
}

void shutdown_machine(uint32_t status)
{
    uint32_t cores = kernel_shared->core_count;
    uint64_t wait_ms = HALT_WAIT_MS + (uint64_t)HALT_WAIT_PER_CORE_MS * cores;
    ask_all_to_halt();
    uint64_t start = rdtsc(), limit = kernel_shared->tsc_hz / 1000 * wait_ms;
    while (cores_still_online() > 0 && rdtsc() - start < limit)
        if (intercore_poll() == 0)
            cpu_relax();
    for (uint32_t core = FIRST_PKERNEL_CORE; core < cores; core++) {
        if (is_online(core)) {
            kprintf("shutdown: core %u did not stop within %lu ms\n", core, wait_ms);
            status = status != 0 ? status : 1;
        }
    }
    kprintf("formica: powering off (status %u)\n", status);
    machine_exit(status);
}
