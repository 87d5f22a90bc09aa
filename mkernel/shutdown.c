/* shutdown.c: asks each p-kernel core to halt and waits for its answer; a
 * core that does not answer is named, and the run then counts as failed. */
#include "shutdown.h"
#include "console.h"
#include "intercore.h"
#include "panic.h"
#include "shared.h"

static bool halt_core(uint32_t core)
{
    struct intercore_message request = {.type = MESSAGE_HALT}, reply;
    return intercore_call_bounded(core, &request, &reply, kernel_shared->tsc_hz);
}

void shutdown_machine(uint32_t status)
{
    for (uint32_t core = FIRST_PKERNEL_CORE; core < kernel_shared->core_count; core++) {
        if (!kernel_shared->cpus[core].online)
            continue;
        if (!halt_core(core)) {
            kprintf("shutdown: core %u did not stop within a second\n", core);
            status = status != 0 ? status : 1;
        }
    }
    kprintf("formica: powering off (status %u)\n", status);
    machine_exit(status);
}
