/* virtio_legacy.c: the legacy (transitional) virtio PCI interface shared by
 * the virtio-blk and virtio-net drivers (see virtio_legacy.h): the register
 * block in I/O BAR 0, status and feature negotiation, and split virtqueues in
 * the legacy layout, whose used ring starts on the page after the descriptor
 * table and available ring. */
#include <formica/virtio_legacy.h>
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/port_io.h>

#define REGISTER_DEVICE_FEATURES 0x00
#define REGISTER_GUEST_FEATURES 0x04
#define REGISTER_QUEUE_ADDRESS 0x08 /* page number of the rings */
#define REGISTER_QUEUE_SIZE 0x0c
#define REGISTER_QUEUE_SELECT 0x0e
#define REGISTER_QUEUE_NOTIFY 0x10
#define REGISTER_STATUS 0x12
#define REGISTER_ISR 0x13
#define REGISTER_CONFIG_VECTOR 0x14 /* present while MSI-X is on */
#define REGISTER_QUEUE_VECTOR 0x16  /* of the selected queue; likewise */
#define NO_VECTOR 0xffff
#define STATUS_ACKNOWLEDGE 1
#define STATUS_DRIVER 2
#define STATUS_DRIVER_OK 4
#define STATUS_FAILED 128
#define RING_ALIGNMENT 4096u /* the legacy interface's fixed page size */

static uint64_t align_up(uint64_t value, uint64_t alignment)
{
    return (value + alignment - 1) & ~(alignment - 1);
}

long virtio_legacy_start(const struct pci_function *function, uint32_t wanted, uint16_t *io)
{
    bool is_io = false;
    uint64_t bar = pci_bar(function, 0, &is_io);
    if (!is_io || bar == 0)
        return -E_IO;
    uint16_t base = (uint16_t)bar;
    *io = base;
    pci_enable(function);
    port_out8(base + REGISTER_STATUS, 0); /* reset */
    port_out8(base + REGISTER_STATUS, STATUS_ACKNOWLEDGE);
    port_out8(base + REGISTER_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER);
    uint32_t offered = port_in32(base + REGISTER_DEVICE_FEATURES);
    port_out32(base + REGISTER_GUEST_FEATURES, offered & wanted);
    return 0;
}

uint32_t virtio_legacy_features(uint16_t io)
{
    return port_in32(io + REGISTER_GUEST_FEATURES);
}

void virtio_legacy_driver_ok(uint16_t io)
{
    port_out8(io + REGISTER_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_DRIVER_OK);
}

void virtio_legacy_failed(uint16_t io)
{
    port_out8(io + REGISTER_STATUS, STATUS_FAILED);
}

uint8_t virtio_legacy_interrupt_status(uint16_t io)
{
    return port_in8(io + REGISTER_ISR);
}

/* Writes vector 0 into `reg` (after selecting what it is for) and reads it back. */
static bool vector_taken(uint16_t io, uint16_t reg)
{
    port_out16(io + reg, 0);
    return port_in16(io + reg) != NO_VECTOR;
}

long virtio_legacy_route_to_vector_0(uint16_t io, const uint16_t *queues, unsigned count)
{
    if (!vector_taken(io, REGISTER_CONFIG_VECTOR))
        return -E_IO;
    for (unsigned i = 0; i < count; i++) {
        port_out16(io + REGISTER_QUEUE_SELECT, queues[i]);
        if (!vector_taken(io, REGISTER_QUEUE_VECTOR))
            return -E_IO;
    }
    return 0;
}

long virtqueue_set_up(struct virtqueue *queue, uint16_t io, uint16_t index, uint16_t min_size,
                      uint16_t max_size)
{
    port_out16(io + REGISTER_QUEUE_SELECT, index);
    uint16_t size = port_in16(io + REGISTER_QUEUE_SIZE);
    if (size == 0 || size < min_size || size > max_size)
        return -E_IO;
    uint64_t avail_offset = sizeof(struct virtq_descriptor) * (uint64_t)size;
    uint64_t used_offset = align_up(avail_offset + 6 + 2ull * size, RING_ALIGNMENT);
    uint64_t bytes = used_offset + align_up(6 + sizeof(struct virtq_used_element) * (uint64_t)size,
                                            RING_ALIGNMENT);
    struct dma_region ring;
    long result = dma_allocate(bytes, &ring);
    if (result < 0)
        return result;
    queue->io = io;
    queue->index = index;
    queue->size = size;
    queue->descriptors = (volatile struct virtq_descriptor *)ring.address;
    queue->avail = (volatile uint16_t *)(ring.address + avail_offset);
    queue->used = (volatile uint16_t *)(ring.address + used_offset);
    queue->last_used = 0;
    port_out32(io + REGISTER_QUEUE_ADDRESS, (uint32_t)(ring.physical / RING_ALIGNMENT));
    return 0;
}

void virtqueue_set_descriptor(struct virtqueue *queue, uint16_t id, uint64_t address,
                              uint32_t length, uint16_t flags, uint16_t next)
{
    queue->descriptors[id].address = address;
    queue->descriptors[id].length = length;
    queue->descriptors[id].flags = flags;
    queue->descriptors[id].next = next;
}

void virtqueue_add(struct virtqueue *queue, uint16_t head)
{
    uint16_t index = queue->avail[1];
    queue->avail[2 + index % queue->size] = head;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    queue->avail[1] = (uint16_t)(index + 1);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void virtqueue_notify(const struct virtqueue *queue)
{
    port_out16(queue->io + REGISTER_QUEUE_NOTIFY, queue->index);
}

void virtqueue_notify_if_wanted(const struct virtqueue *queue)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the new avail index before the device's flag */
    if (!(__atomic_load_n(&queue->used[0], __ATOMIC_ACQUIRE) & VIRTQ_USED_NO_NOTIFY))
        virtqueue_notify(queue);
}

bool virtqueue_has_used(const struct virtqueue *queue)
{
    return queue->last_used != queue->used[1];
}

bool virtqueue_used_next(struct virtqueue *queue, uint32_t *id, uint32_t *length)
{
    if (!virtqueue_has_used(queue))
        return false;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    const volatile struct virtq_used_element *elements =
        (const volatile struct virtq_used_element *)(queue->used + 2);
    const volatile struct virtq_used_element *element = &elements[queue->last_used % queue->size];
    *id = element->id;
    *length = element->length;
    queue->last_used++;
    return true;
}
