/* block_run.c: the request loop shared by the drivers. It keeps the device
 * as full as it allows, and after each pass acknowledges the interrupt
 * before irq_wait, as a level-triggered PCI line requires. */
#include "disk_drivers.h"
#include <formica/device.h>
#include <formica/errors.h>

static bool request_fits(const struct block_device *device, const struct block_request *request)
{
    if (request->flush)
        return true;
    return request->sectors > 0 && request->lba < device->sectors &&
           request->sectors <= device->sectors - request->lba;
}

static unsigned submit_waiting(struct block_device *device, struct block_request *requests,
                               unsigned count, unsigned next)
{
    while (next < count) {
        if (requests[next].flush && !device->volatile_cache)
            requests[next].done = true; /* nothing cached: already on the medium */
        if (requests[next].done) {      /* refused before it reached the device */
            next++;
            continue;
        }
        if (device->submit(device, &requests[next]) == -E_BUSY)
            break;
        next++;
    }
    return next;
}

static bool all_done(const struct block_request *requests, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        if (!requests[i].done)
            return false;
    return true;
}

static long run(struct block_device *device, struct block_request *requests, unsigned count,
                bool checked)
{
    for (unsigned i = 0; i < count; i++) {
        requests[i].done = false;
        requests[i].status = 0;
        if (checked && !request_fits(device, &requests[i])) {
            requests[i].done = true;
            requests[i].status = -E_INVALID;
        }
    }
    unsigned next = 0;
    for (;;) {
        next = submit_waiting(device, requests, count, next);
        device->complete(device);
        if (next == count && all_done(requests, count))
            break;
        long woken = device->timeout_ms ? irq_wait_timeout(device->timeout_ms) : irq_wait();
        if (woken < 0)
            return woken;
        if (woken == 0) /* nothing completed for timeout_ms */
            device->timed_out(device);
        else
            device->interrupts++;
    }
    for (unsigned i = 0; i < count; i++)
        if (requests[i].status != 0)
            return requests[i].status;
    return 0;
}

long block_run(struct block_device *device, struct block_request *requests, unsigned count)
{
    return run(device, requests, count, true);
}

long block_flush(struct block_device *device, uint32_t core)
{
    if (!device->volatile_cache)
        return 0;
    struct block_request request = {.flush = true, .core = core};
    return run(device, &request, 1, true);
}

long block_run_unchecked(struct block_device *device, struct block_request *requests,
                         unsigned count)
{
    return run(device, requests, count, false);
}
