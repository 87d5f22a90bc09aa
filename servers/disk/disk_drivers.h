/* disk_drivers.h: DK's own drivers behind <formica/block_device.h> (AHCI and
 * NVMe; virtio-blk is in libvirtio.a) and the loop that runs requests on
 * whichever of them found the disk. */
#pragma once
#include <formica/block_device.h>

bool ahci_probe(struct block_device *device);
bool nvme_probe(struct block_device *device);

/* Runs `count` requests, up to max_outstanding at a time, sleeping in
 * irq_wait between completions; 0 or the first request's error. Requests
 * outside the capacity are refused with -E_INVALID without reaching the disk. */
long block_run(struct block_device *device, struct block_request *requests, unsigned count);
/* Flushes the disk's write cache (a no-op without one): every write that
 * completed before is then on stable storage. 0 or -E_IO. */
long block_flush(struct block_device *device, uint32_t core);
/* The same without the capacity check (to provoke device errors in tests). */
long block_run_unchecked(struct block_device *device, struct block_request *requests,
                         unsigned count);
