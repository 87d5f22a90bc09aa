/* block_device.h: the interface of a block device driver: a device of
 * 512-byte sectors that takes several requests at once, each moving whole
 * sectors between the disk and DMA memory, completed by interrupt. DK drives
 * its disk through it (servers/disk/disk_drivers.h); the virtio-blk driver is
 * in libvirtio.a (lib/virtio/virtio_blk.c), which the pager uses too. */
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

#define BLOCK_DEVICE_SERIAL_BYTES 20

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
    uint64_t interrupts;                    /* irq_wait wake-ups */
    char serial[BLOCK_DEVICE_SERIAL_BYTES]; /* the disk's serial (virtio-blk GET_ID), zeros if none
                                             */
};

/* Probes: true and `device` filled when the controller and a disk are found. */
bool virtio_blk_probe(struct block_device *device);
/* The `index`-th virtio-blk function (0 is DK's disk). With `interrupts`
 * set, a line already owned by another driver is accepted: *interrupts
 * says whether completions interrupt (else the caller polls). */
bool virtio_blk_probe_at(struct block_device *device, unsigned index, bool *interrupts);
