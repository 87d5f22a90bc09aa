/* share_weight_syscall.c: SYS_SHARE_WEIGHT, the caller's weight between
 * accounts on its core (scheduler.c divides its charged cycles by it): a
 * memory node's remote account gets P of the core against local work. */
#include "cpu.h"
#include "device_state.h"
#include "fair_queue.h"
#include "process.h"
#include <formica/errors.h>
#include <formica/protocol/syscall_table.h>
#include <formica/syscalls.h>

_Static_assert(SHARE_WEIGHT_ONE == FAIR_QUEUE_WEIGHT_ONE, "one weight scale");

long sys_share_weight(uint32_t weight)
{
    struct process *caller = this_cpu()->current;
    if (weight == 0 || weight > SHARE_WEIGHT_MAX)
        return -E_INVALID;
    if (weight > SHARE_WEIGHT_ONE && !device_is_driver(caller))
        return -E_PERMISSION;
    caller->share_weight = weight == SHARE_WEIGHT_ONE ? 0 : weight;
    return 0;
}
