/* block_device.h: the interface DK's main uses for either driver: a device
 * of 512-byte sectors that takes several requests at once, each moving
 * whole sectors between the disk and DMA memory, completed by interrupt. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define SECTOR_BYTES 512

struct block_request {
    uint64_t lba;
    uint32_t sectors;
    bool write;
    bool flush;        /* write the device's volatile cache to the medium (lba, sectors unused) */
    uint32_t core;     /* the core of the requester (NVMe: picks that core's queue pair) */
    uint64_t physical; /* DMA buffer of sectors * SECTOR_BYTES bytes */
    bool done;         /* set by the driver's completion poll, in this same process */
    long status;       /* 0, -E_IO (device error) or -E_INVALID (refused) */
};

struct block_device {
    const char *driver; /* "virtio-blk", "ahci" or "nvme" */
    uint64_t sectors;   /* capacity */
    unsigned port;      /* AHCI port, NVMe namespace (0 for virtio) */
    unsigned max_outstanding;
    bool volatile_cache; /* flush requests reach the device; else they finish at once */
    uint32_t timeout_ms; /* 0: wait for ever; else timed_out is called after this long
                            without an interrupt while requests are outstanding */
    /* Fails every outstanding request with -E_IO and makes the device usable again. */
    void (*timed_out)(struct block_device *device);
    /* Starts `request`; -E_BUSY when every slot is taken. */
    long (*submit)(struct block_device *device, struct block_request *request);
    /* Acknowledges the device's interrupt and marks finished requests done. */
    void (*complete)(struct block_device *device);
    void *state;
    uint64_t interrupts; /* irq_wait wake-ups */
};

/* Probes: true and `device` filled when the controller and a disk are found. */
bool virtio_blk_probe(struct block_device *device);
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
