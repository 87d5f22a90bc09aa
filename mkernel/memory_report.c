/* memory_report.c: the m-kernel's answer to SYS_MEMORY_REPORT: the frame
 * allocator's total and free bytes, and what the caller may plan on: free
 * less the kernel's reserve, within what its quota account may still map. */
#include "authority.h"
#include "intercore.h"
#include "physical_memory.h"
#include "process.h"
#include "shared.h"

/* The free bytes the kernel keeps for itself (formica/syscalls.h). */
static uint64_t kernel_reserve_bytes(uint64_t total)
{
    uint64_t reserve = total / MEMORY_RESERVE_DIVISOR;
    return reserve > MEMORY_RESERVE_MINIMUM ? reserve : MEMORY_RESERVE_MINIMUM;
}

void serve_memory_report(const struct intercore_message *message,
                         const struct intercore_memory_report_request *request,
                         struct intercore_memory_report_reply *reply)
{
    (void)message;
    uint64_t total = kernel_shared->frames_total * FRAME_SIZE;
    uint64_t free = physical_free_bytes();
    uint64_t reserve = kernel_reserve_bytes(total);
    uint64_t available = free > reserve ? free - reserve : 0;
    const struct process *caller = process_find((uint32_t)request->pid);
    if (caller != NULL) {
        uint64_t left = authority_memory_left(caller);
        if (left < available)
            available = left;
    }
    reply->total = total;
    reply->free = free;
    reply->available = available;
}
