/* virtio_blk.c: virtio-blk through the legacy (transitional) PCI interface:
 * registers in I/O BAR 0, one virtqueue in the legacy split layout, three
 * descriptors per request (header, data, status byte), completion by INTx. */
#include "block_device.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/pci.h>
#include <formica/port_io.h>
#include <stdio.h>
#include <string.h>

#define VIRTIO_VENDOR 0x1af4
#define VIRTIO_BLK_TRANSITIONAL 0x1001
#define REGISTER_DEVICE_FEATURES 0x00
#define REGISTER_GUEST_FEATURES 0x04
#define REGISTER_QUEUE_ADDRESS 0x08
#define REGISTER_QUEUE_SIZE 0x0c
#define REGISTER_QUEUE_SELECT 0x0e
#define REGISTER_QUEUE_NOTIFY 0x10
#define REGISTER_STATUS 0x12
#define REGISTER_ISR 0x13
#define REGISTER_CAPACITY 0x14 /* device configuration while MSI-X is off */
#define STATUS_ACKNOWLEDGE 1
#define STATUS_DRIVER 2
#define STATUS_DRIVER_OK 4
#define DESCRIPTOR_NEXT 1
#define DESCRIPTOR_WRITE 2
#define REQUEST_IN 0
#define REQUEST_OUT 1
#define MAX_SLOTS 32
#define PAGE 4096u

struct descriptor {
    uint64_t address;
    uint32_t length;
    uint16_t flags;
    uint16_t next;
};

struct request_header {
    uint32_t type;
    uint32_t reserved;
    uint64_t sector;
};

struct used_element {
    uint32_t id;
    uint32_t length;
};

struct virtio_state {
    uint16_t io;
    uint16_t queue_size;
    volatile struct descriptor *descriptors;
    volatile uint16_t *avail; /* flags, idx, ring[queue_size] */
    volatile uint16_t *used;  /* flags, idx, then used_element[queue_size] */
    uint16_t last_used;
    struct request_header *headers; /* MAX_SLOTS, then MAX_SLOTS status bytes */
    uint64_t headers_physical;
    struct block_request *slots[MAX_SLOTS];
    unsigned slot_count;
};

static struct virtio_state virtio;

static uint64_t align_up(uint64_t value, uint64_t alignment)
{
    return (value + alignment - 1) & ~(alignment - 1);
}

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
    virtio.descriptors[index].address = address;
    virtio.descriptors[index].length = length;
    virtio.descriptors[index].flags = flags;
    virtio.descriptors[index].next = (uint16_t)(index + 1);
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
    virtio.headers[slot] = (struct request_header){
        .type = request->write ? REQUEST_OUT : REQUEST_IN, .sector = request->lba};
    *status_byte(slot) = 0xff;
    unsigned head = slot * 3;
    set_descriptor(head, virtio.headers_physical + slot * sizeof(struct request_header),
                   sizeof(struct request_header), DESCRIPTOR_NEXT);
    set_descriptor(head + 1, request->physical, request->sectors * SECTOR_BYTES,
                   DESCRIPTOR_NEXT | (request->write ? 0 : DESCRIPTOR_WRITE));
    set_descriptor(head + 2, status_physical(slot), 1, DESCRIPTOR_WRITE);
    uint16_t index = virtio.avail[1];
    virtio.avail[2 + index % virtio.queue_size] = (uint16_t)head;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    virtio.avail[1] = (uint16_t)(index + 1);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    port_out16(virtio.io + REGISTER_QUEUE_NOTIFY, 0);
    return 0;
}

static void virtio_complete(struct block_device *device)
{
    (void)device;
    port_in8(virtio.io + REGISTER_ISR); /* reading acknowledges and lowers the line */
    const volatile struct used_element *elements = (const volatile struct used_element *)(virtio.used + 2);
    while (virtio.last_used != virtio.used[1]) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        unsigned slot = elements[virtio.last_used % virtio.queue_size].id / 3;
        virtio.last_used++;
        if (slot >= virtio.slot_count || virtio.slots[slot] == NULL)
            continue;
        struct block_request *request = virtio.slots[slot];
        request->status = *status_byte(slot) == 0 ? 0 : -E_IO;
        request->done = true;
        virtio.slots[slot] = NULL;
    }
}

/* The legacy split ring: descriptors and the available ring, then the used
 * ring on the next page boundary. */
static bool set_up_queue(void)
{
    port_out16(virtio.io + REGISTER_QUEUE_SELECT, 0);
    virtio.queue_size = port_in16(virtio.io + REGISTER_QUEUE_SIZE);
    if (virtio.queue_size < 3)
        return false;
    uint64_t used_offset = align_up(16ull * virtio.queue_size + 6 + 2ull * virtio.queue_size, PAGE);
    uint64_t bytes = used_offset + align_up(6 + 8ull * virtio.queue_size, PAGE);
    struct dma_region ring, headers;
    if (dma_allocate(bytes, &ring) < 0 || dma_allocate(PAGE, &headers) < 0)
        return false;
    virtio.descriptors = (volatile struct descriptor *)ring.address;
    virtio.avail = (volatile uint16_t *)(ring.address + 16ull * virtio.queue_size);
    virtio.used = (volatile uint16_t *)(ring.address + used_offset);
    virtio.headers = (struct request_header *)headers.address;
    virtio.headers_physical = headers.physical;
    virtio.slot_count = virtio.queue_size / 3 < MAX_SLOTS ? virtio.queue_size / 3 : MAX_SLOTS;
    port_out32(virtio.io + REGISTER_QUEUE_ADDRESS, (uint32_t)(ring.physical / PAGE));
    return true;
}

static bool start_device(const struct pci_function *function)
{
    bool is_io = false;
    uint64_t bar = pci_bar(function, 0, &is_io);
    if (!is_io || bar == 0) {
        printf("dk: virtio-blk without an I/O BAR 0 (modern-only device?)\n");
        return false;
    }
    virtio.io = (uint16_t)bar;
    pci_enable(function);
    port_out8(virtio.io + REGISTER_STATUS, 0); /* reset */
    port_out8(virtio.io + REGISTER_STATUS, STATUS_ACKNOWLEDGE);
    port_out8(virtio.io + REGISTER_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER);
    port_in32(virtio.io + REGISTER_DEVICE_FEATURES);
    port_out32(virtio.io + REGISTER_GUEST_FEATURES, 0); /* nothing optional is needed */
    if (!set_up_queue()) {
        printf("dk: virtio-blk queue set-up failed\n");
        return false;
    }
    port_out8(virtio.io + REGISTER_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_DRIVER_OK);
    return true;
}

bool virtio_blk_probe(struct block_device *device)
{
    struct pci_function function;
    if (!pci_find_device(VIRTIO_VENDOR, VIRTIO_BLK_TRANSITIONAL, 0, &function))
        return false;
    long gsi = irq_attach(function.interrupt_line); /* first: it also claims the device */
    if (gsi < 0) {
        printf("dk: virtio-blk interrupt line %u: %s\n", function.interrupt_line, error_text(gsi));
        return false;
    }
    if (!start_device(&function))
        return false;
    uint64_t low = port_in32(virtio.io + REGISTER_CAPACITY);
    uint64_t high = port_in32(virtio.io + REGISTER_CAPACITY + 4);
    memset(device, 0, sizeof(*device));
    device->driver = "virtio-blk";
    device->sectors = high << 32 | low;
    device->max_outstanding = virtio.slot_count;
    device->submit = virtio_submit;
    device->complete = virtio_complete;
    device->state = &virtio;
    return true;
}
