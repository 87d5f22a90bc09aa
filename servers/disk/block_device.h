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
    uint64_t physical; /* DMA buffer of sectors * SECTOR_BYTES bytes */
    volatile bool done;
    long status; /* 0, -E_IO (device error) or -E_INVALID (refused) */
};

struct block_device {
    const char *driver; /* "virtio-blk" or "ahci" */
    uint64_t sectors;   /* capacity */
    unsigned port;      /* AHCI port (0 for virtio) */
    unsigned max_outstanding;
    /* Starts `request`; -E_BUSY when every slot is taken. */
    long (*submit)(struct block_device *device, struct block_request *request);
    /* Acknowledges the device's interrupt and marks finished requests done. */
    void (*complete)(struct block_device *device);
    void *state;
    uint64_t interrupts; /* irq_wait wake-ups */
};

/* Probes: true and `device` filled when the controller and a disk are found. */
bool virtio_blk_probe(struct block_device *device);
/* The `index`-th virtio-blk function (0 is DK's disk). With `interrupts`
 * set, a line already owned by another driver is accepted: *interrupts
 * says whether completions interrupt (else the caller polls). */
bool virtio_blk_probe_at(struct block_device *device, unsigned index, bool *interrupts);
bool ahci_probe(struct block_device *device);

/* Runs `count` requests, up to max_outstanding at a time, sleeping in
 * irq_wait between completions; 0 or the first request's error. Requests
 * outside the capacity are refused with -E_INVALID without reaching the disk. */
long block_run(struct block_device *device, struct block_request *requests, unsigned count);
/* The same without the capacity check (to provoke device errors in tests). */
long block_run_unchecked(struct block_device *device, struct block_request *requests,
                         unsigned count);
