/* process_copy.c: SYS_COPY_TO runs on the m-kernel, which alone frees
 * address spaces, so neither side can vanish mid-copy. Both ranges are
 * translated page by page and copied through the direct map. */
#include "process_copy.h"
#include "layout.h"
#include "paging.h"
#include "process.h"
#include <formica/errors.h>
#include <string.h>

/* Physical address of `address` in `root` when mapped (writable if asked). */
static uint64_t frame_of(uint64_t root, uint64_t address, bool write)
{
    uint64_t *entry = paging_find_entry(root, address);
    if (entry == NULL || !(*entry & PAGE_PRESENT) || !(*entry & PAGE_USER) ||
        (write && !(*entry & PAGE_WRITABLE)))
        return 0;
    return (*entry & PAGE_ADDRESS_MASK) | (address & (PAGE_SIZE - 1));
}

static long copy_between(struct process *from, uint64_t source, struct process *to,
                         uint64_t destination, uint64_t bytes)
{
    while (bytes > 0) {
        uint64_t chunk = PAGE_SIZE - (source & (PAGE_SIZE - 1));
        uint64_t room = PAGE_SIZE - (destination & (PAGE_SIZE - 1));
        if (room < chunk)
            chunk = room;
        if (bytes < chunk)
            chunk = bytes;
        uint64_t read = frame_of(from->root, source, false);
        uint64_t write = frame_of(to->root, destination, true);
        if (read == 0 || write == 0)
            return -E_FAULT;
        memcpy(phys_to_virt(write), phys_to_virt(read), chunk);
        source += chunk;
        destination += chunk;
        bytes -= chunk;
    }
    return 0;
}

static long copy_to(const struct intercore_copy_to_request *request)
{
    struct process *from = process_find((uint32_t)request->caller);
    struct process *to = process_find((uint32_t)request->target);
    uint64_t offset = request->offset, source = request->source, bytes = request->bytes;
    if (from == NULL || to == NULL || to->state == PROCESS_ZOMBIE)
        return -E_NOT_FOUND;
    if (offset > to->copy_window_bytes || bytes > to->copy_window_bytes - offset)
        return -E_PERMISSION;
    if (source + bytes < source || source < USER_SPACE_START || source + bytes > USER_SPACE_END)
        return -E_FAULT;
    return copy_between(from, source, to, to->copy_window + offset, bytes);
}

void serve_copy_to(const struct intercore_message *message,
                   const struct intercore_copy_to_request *request,
                   struct intercore_copy_to_reply *reply)
{
    (void)message;
    reply->result = copy_to(request);
}
