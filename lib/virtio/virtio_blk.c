/* virtio_blk.c: virtio-blk through the legacy (transitional) PCI interface:
 * registers in I/O BAR 0, one virtqueue in the legacy split layout, three
 * descriptors per request (header, data, status byte), completion by MSI-X
 * (table entry 0) or else INTx. The transport and the ring are
 * lib/virtio/virtio_legacy.c's. */
#include <formica/virtio_legacy.h>
#include <formica/block_device.h>
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/pci.h>
#include <formica/pci_interrupt.h>
#include <formica/port_io.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define VIRTIO_BLK_TRANSITIONAL 0x1001
#define CONFIG_CAPACITY 0 /* in the device configuration */
#define REQUEST_IN 0
#define REQUEST_OUT 1
#define REQUEST_FLUSH 4
#define REQUEST_GET_ID 8        /* VIRTIO_BLK_T_GET_ID: the device's 20-byte serial */
#define SERIAL_OFFSET 2048u     /* where in the headers' page the serial is read into */
#define FEATURE_FLUSH (1u << 9) /* VIRTIO_BLK_F_FLUSH: the device takes flush requests */
#define MAX_SLOTS 32
#define PAGE 4096u

struct request_header {
    uint32_t type;
    uint32_t reserved;
    uint64_t sector;
};

struct virtio_state {
    uint16_t io;
    bool msix;                      /* MSI-X on: no line to lower, the configuration at 0x18 */
    struct virtqueue queue;         /* queue 0, three descriptors per slot */
    struct request_header *headers; /* MAX_SLOTS, then MAX_SLOTS status bytes */
    uint64_t headers_physical;
    struct block_request *slots[MAX_SLOTS];
    unsigned slot_count;
};

static struct virtio_state virtio;

static volatile uint8_t *status_byte(unsigned slot)
{
    return (volatile uint8_t *)(virtio.headers + MAX_SLOTS) + slot;
}

static uint64_t status_physical(unsigned slot)
{
    return virtio.headers_physical + MAX_SLOTS * sizeof(struct request_header) + slot;
}

static void set_descriptor(unsigned index, uint64_t address, uint32_t length, uint16_t flags)
{
    virtqueue_set_descriptor(&virtio.queue, (uint16_t)index, address, length, flags,
                             (uint16_t)(index + 1));
}

static long virtio_submit(struct block_device *device, struct block_request *request)
{
    (void)device;
    unsigned slot = 0;
    while (slot < virtio.slot_count && virtio.slots[slot] != NULL)
        slot++;
    if (slot == virtio.slot_count)
        return -E_BUSY;
    virtio.slots[slot] = request;
    uint32_t type = request->flush ? REQUEST_FLUSH : request->write ? REQUEST_OUT : REQUEST_IN;
    virtio.headers[slot] = (struct request_header){.type = type, .sector = request->lba};
    *status_byte(slot) = 0xff;
    unsigned head = slot * 3;
    if (request->flush) { /* header, then straight to the status byte */
        virtqueue_set_descriptor(&virtio.queue, (uint16_t)head,
                                 virtio.headers_physical + slot * sizeof(struct request_header),
                                 sizeof(struct request_header), VIRTQ_DESCRIPTOR_NEXT,
                                 (uint16_t)(head + 2));
    } else {
        set_descriptor(head, virtio.headers_physical + slot * sizeof(struct request_header),
                       sizeof(struct request_header), VIRTQ_DESCRIPTOR_NEXT);
        set_descriptor(head + 1, request->physical, request->sectors * SECTOR_BYTES,
                       VIRTQ_DESCRIPTOR_NEXT | (request->write ? 0 : VIRTQ_DESCRIPTOR_WRITE));
    }
    set_descriptor(head + 2, status_physical(slot), 1, VIRTQ_DESCRIPTOR_WRITE);
    virtqueue_add(&virtio.queue, (uint16_t)head);
    virtqueue_notify(&virtio.queue);
    return 0;
}

static void virtio_complete(struct block_device *device)
{
    (void)device;
    if (!virtio.msix)
        virtio_legacy_interrupt_status(virtio.io); /* reading acknowledges and lowers the line */
    uint32_t id, length;
    while (virtqueue_used_next(&virtio.queue, &id, &length)) {
        unsigned slot = id / 3;
        if (slot >= virtio.slot_count || virtio.slots[slot] == NULL)
            continue;
        struct block_request *request = virtio.slots[slot];
        request->status = *status_byte(slot) == 0 ? 0 : -E_IO;
        request->done = true;
        virtio.slots[slot] = NULL;
    }
}

/* Queue 0 (at least one slot's three descriptors) and a page for the
 * request headers and status bytes. */
static bool set_up_queue(void)
{
    if (virtqueue_set_up(&virtio.queue, virtio.io, 0, 3, UINT16_MAX) < 0)
        return false;
    struct dma_region headers;
    if (dma_allocate(PAGE, &headers) < 0)
        return false;
    virtio.headers = (struct request_header *)headers.address;
    virtio.headers_physical = headers.physical;
    unsigned triples = virtio.queue.size / 3u;
    virtio.slot_count = triples < MAX_SLOTS ? triples : MAX_SLOTS;
    return true;
}

static bool start_device(const struct pci_function *function)
{
    /* the only optional feature: flush requests (the journal's barriers) */
    if (virtio_legacy_start(function, FEATURE_FLUSH, &virtio.io) < 0) {
        printf("dk: virtio-blk without an I/O BAR 0 (modern-only device?)\n");
        return false;
    }
    if (!set_up_queue()) {
        printf("dk: virtio-blk queue set-up failed\n");
        return false;
    }
    const uint16_t queue = 0;
    if (virtio.msix && virtio_legacy_route_to_vector_0(virtio.io, &queue, 1) < 0) {
        printf("dk: virtio-blk refused MSI-X vector 0\n");
        virtio_legacy_failed(virtio.io);
        return false;
    }
    virtio_legacy_driver_ok(virtio.io);
    return true;
}

/* The serial (GET_ID, before any other request: slot 0, polled), zeros
 * when the device gives none within a second. */
static void read_serial(struct block_device *device)
{
    uint8_t *serial = (uint8_t *)virtio.headers + SERIAL_OFFSET;
    memset(serial, 0, BLOCK_DEVICE_SERIAL_BYTES);
    virtio.headers[0] = (struct request_header){.type = REQUEST_GET_ID};
    *status_byte(0) = 0xff;
    set_descriptor(0, virtio.headers_physical, sizeof(struct request_header),
                   VIRTQ_DESCRIPTOR_NEXT);
    set_descriptor(1, virtio.headers_physical + SERIAL_OFFSET, BLOCK_DEVICE_SERIAL_BYTES,
                   VIRTQ_DESCRIPTOR_NEXT | VIRTQ_DESCRIPTOR_WRITE);
    set_descriptor(2, status_physical(0), 1, VIRTQ_DESCRIPTOR_WRITE);
    virtqueue_add(&virtio.queue, 0);
    virtqueue_notify(&virtio.queue);
    uint32_t id, length;
    bool done = false;
    for (int waited = 0;
         waited < 1000 && !(done = virtqueue_used_next(&virtio.queue, &id, &length)); waited++)
        sleep_ms(1);
    virtio_legacy_interrupt_status(virtio.io); /* acknowledged: the line goes low again */
    if (done && *status_byte(0) == 0)
        memcpy(device->serial, serial, BLOCK_DEVICE_SERIAL_BYTES);
}

bool virtio_blk_probe(struct block_device *device)
{
    return virtio_blk_probe_at(device, 0, NULL);
}

bool virtio_blk_probe_at(struct block_device *device, unsigned index, bool *interrupts)
{
    struct pci_function function;
    if (!pci_find_device(VIRTIO_VENDOR, VIRTIO_BLK_TRANSITIONAL, index, &function))
        return false;
    pci_enable(&function); /* the MSI-X table is in a memory BAR */
    /* first: the vector (or the line) is also the claim on the device */
    long kind = pci_interrupt_attach(&function, "dk: virtio-blk",
                                     PCI_INTERRUPT_TAKES_MSIX | PCI_INTERRUPT_TAKES_INTX);
    if (kind < 0 || (kind == PCI_INTERRUPT_NONE && interrupts == NULL)) {
        printf("dk: virtio-blk at %02x:%02x.%x: %s\n", function.bus, function.device,
               function.function, kind < 0 ? error_text(kind) : "no interrupt");
        return false;
    }
    if (interrupts != NULL)
        *interrupts = kind != PCI_INTERRUPT_NONE; /* none: the caller polls */
    virtio.msix = kind == PCI_INTERRUPT_MSIX;
    if (!start_device(&function))
        return false;
    uint16_t config = (uint16_t)(virtio.io + (virtio.msix ? VIRTIO_LEGACY_DEVICE_CONFIG_MSIX
                                                          : VIRTIO_LEGACY_DEVICE_CONFIG));
    uint64_t low = port_in32(config + CONFIG_CAPACITY);
    uint64_t high = port_in32(config + CONFIG_CAPACITY + 4);
    memset(device, 0, sizeof(*device));
    device->driver = "virtio-blk";
    device->sectors = high << 32 | low;
    device->max_outstanding = virtio.slot_count;
    device->volatile_cache = (virtio_legacy_features(virtio.io) & FEATURE_FLUSH) != 0;
    device->submit = virtio_submit;
    device->complete = virtio_complete;
    device->state = &virtio;
    read_serial(device);
    printf("dk: virtio-blk at %02x:%02x.%x: %s interrupts\n", function.bus, function.device,
           function.function,
           kind == PCI_INTERRUPT_NONE ? "no (polled)"
                                      : pci_interrupt_name((enum pci_interrupt_kind)kind));
    return true;
}
