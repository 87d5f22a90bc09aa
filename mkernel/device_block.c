/* device_block.c: SYS_ICA_DEVICE_BLOCK's m-kernel side: a block ICA over one
 * page of persistent memory a driver has mapped (BLK's NVM tier lends its
 * lines this way), after checking the page is such memory and is the caller's. */
#include "console.h"
#include "device_memory.h"
#include "ica_services.h"
#include "layout.h"
#include "persistent_memory.h"
#include <formica/errors.h>

/* The block ICA's id, or -E_INVALID (logged) for a page that is not one of
 * the driver's persistent-memory pages. */
static long device_block(uint32_t pid, uint64_t physical)
{
    if (physical % PAGE_SIZE != 0 || physical + PAGE_SIZE < physical) {
        kprintf("ica: pid %u: device block 0x%lx refused: not page-aligned\n", pid, physical);
        return -E_INVALID;
    }
    if (!persistent_memory_holds(physical, physical + PAGE_SIZE) ||
        persistent_memory_is_shared(physical)) { /* another machine's NVM: not in the direct map */
        kprintf("ica: pid %u: device block 0x%lx refused: not persistent memory\n", pid, physical);
        return -E_INVALID;
    }
    if (!device_maps_persistent(pid, physical)) {
        kprintf("ica: pid %u: device block 0x%lx refused: not in its persistent-memory mappings\n",
                pid, physical);
        return -E_INVALID;
    }
    return ica_services_device_block(pid, physical);
}

void serve_ica_device_block(const struct intercore_message *message,
                            const struct intercore_ica_device_block_request *request,
                            struct intercore_ica_device_block_reply *reply)
{
    (void)message;
    reply->id = device_block((uint32_t)request->pid, request->physical);
}
