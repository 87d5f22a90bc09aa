/* virtio_legacy.h: the legacy (transitional) virtio PCI interface that the
 * virtio-blk (lib/virtio/) and virtio-net (lib/net/) drivers share:
 * registers in I/O BAR 0, device status and feature negotiation, split
 * virtqueues in the legacy layout (descriptor table and available ring, the
 * used ring on the next page boundary) set up through the I/O BAR, and
 * notification. Linked from build/out/libvirtio.a (lib/virtio/). Each driver keeps its
 * device-specific part: what its descriptors point at and its device configuration. */
#pragma once
#include <formica/pci.h>
#include <stdbool.h>
#include <stdint.h>

#define VIRTIO_VENDOR 0x1af4
/* The device-specific configuration starts here while MSI-X is off; with
 * MSI-X on, two vector registers come first and it starts 4 bytes later. */
#define VIRTIO_LEGACY_DEVICE_CONFIG 0x14
#define VIRTIO_LEGACY_DEVICE_CONFIG_MSIX 0x18

#define VIRTQ_DESCRIPTOR_NEXT 1    /* `next` continues the chain */
#define VIRTQ_DESCRIPTOR_WRITE 2   /* the device writes the buffer */
#define VIRTQ_AVAIL_NO_INTERRUPT 1 /* in avail[0]: no interrupt on completion */
#define VIRTQ_USED_NO_NOTIFY 1     /* in used[0]: the device does not need a notify now */

struct virtq_descriptor {
    uint64_t address;
    uint32_t length;
    uint16_t flags;
    uint16_t next;
};

struct virtq_used_element {
    uint32_t id;
    uint32_t length;
};

struct virtqueue {
    uint16_t io;    /* the device's I/O BAR 0 */
    uint16_t index; /* the queue's number on the device */
    uint16_t size;  /* descriptors, as the device reported */
    volatile struct virtq_descriptor *descriptors;
    volatile uint16_t *avail; /* flags, idx, ring[size] */
    volatile uint16_t *used;  /* flags, idx, then virtq_used_element[size] */
    uint16_t last_used;       /* the next used element to take */
};

/* Takes the device at I/O BAR 0 of `function`: enables the function, resets
 * the device, sets ACKNOWLEDGE and DRIVER, and accepts those of the device's
 * features that are in `wanted`; *io is the I/O BAR. 0, or -E_IO when there is
 * no I/O BAR 0 (a modern-only device). Queues are set up next, then
 * virtio_legacy_driver_ok. */
long virtio_legacy_start(const struct pci_function *function, uint32_t wanted, uint16_t *io);
/* Sets DRIVER_OK: the device may use its queues. */
/* The features the driver accepted in virtio_legacy_start (offered & wanted). */
uint32_t virtio_legacy_features(uint16_t io);
void virtio_legacy_driver_ok(uint16_t io);
/* Sets FAILED: the driver gave the device up. */
void virtio_legacy_failed(uint16_t io);
/* Reads the ISR register, which acknowledges the interrupt and lowers the line. */
uint8_t virtio_legacy_interrupt_status(uint16_t io);
/* With MSI-X on (table entry 0 programmed, pci_interrupt_attach): the
 * configuration change and each of the `count` queues in `queues` signal
 * MSI-X vector 0. 0, or -E_IO when the device refused a vector (it reads
 * back NO_VECTOR): then it raises none, and the driver polls. Set after
 * the queues, before virtio_legacy_driver_ok. */
long virtio_legacy_route_to_vector_0(uint16_t io, const uint16_t *queues, unsigned count);

/* Selects queue `index`, checks that its size is within [min_size, max_size],
 * allocates its rings in DMA memory (zeroed) and gives the device their
 * address. 0, -E_IO (no such queue or a size out of range) or what
 * dma_allocate returned. */
long virtqueue_set_up(struct virtqueue *queue, uint16_t io, uint16_t index, uint16_t min_size,
                      uint16_t max_size);
/* Fills descriptor `id`. */
void virtqueue_set_descriptor(struct virtqueue *queue, uint16_t id, uint64_t address,
                              uint32_t length, uint16_t flags, uint16_t next);
/* Makes the chain starting at descriptor `head` available to the device
 * (virtqueue_notify tells it). */
void virtqueue_add(struct virtqueue *queue, uint16_t head);
void virtqueue_notify(const struct virtqueue *queue);
/* The same unless the device said it does not need one (it is working
 * through the queue and will see the new entries). */
void virtqueue_notify_if_wanted(const struct virtqueue *queue);
/* Whether the device has used a chain not taken yet. */
bool virtqueue_has_used(const struct virtqueue *queue);
/* Takes the next used element: true with its chain's head id and the bytes
 * the device wrote, or false when there is none. The id is the device's, not
 * checked against the queue size. */
bool virtqueue_used_next(struct virtqueue *queue, uint32_t *id, uint32_t *length);
