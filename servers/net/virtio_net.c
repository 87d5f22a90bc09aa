/* virtio_net.c: virtio-net through the legacy (transitional) PCI interface: MAC
 * from the device configuration, receive queue 0 and transmit queue 1 with one
 * 2 KiB DMA buffer per descriptor, INTx for receive, polling with timeouts. */
#include "net.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/pci.h>
#include <formica/port_io.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define VIRTIO_VENDOR 0x1af4
#define VIRTIO_NET_TRANSITIONAL 0x1000
#define REGISTER_DEVICE_FEATURES 0x00
#define REGISTER_GUEST_FEATURES 0x04
#define REGISTER_QUEUE_ADDRESS 0x08
#define REGISTER_QUEUE_SIZE 0x0c
#define REGISTER_QUEUE_SELECT 0x0e
#define REGISTER_QUEUE_NOTIFY 0x10
#define REGISTER_STATUS 0x12
#define REGISTER_ISR 0x13
#define REGISTER_MAC 0x14 /* device configuration while MSI-X is off */
#define STATUS_ACKNOWLEDGE 1
#define STATUS_DRIVER 2
#define STATUS_DRIVER_OK 4
#define STATUS_FAILED 128
#define FEATURE_MAC (1u << 5)
#define DESCRIPTOR_WRITE 2
#define AVAIL_NO_INTERRUPT 1
#define QUEUE_RECEIVE 0
#define QUEUE_TRANSMIT 1
#define NET_HEADER_BYTES 10 /* legacy virtio_net_hdr without mergeable buffers */
#define BUFFER_BYTES 2048
#define MAX_QUEUE 256
#define PAGE 4096u

struct descriptor {
    uint64_t address;
    uint32_t length;
    uint16_t flags;
    uint16_t next;
};

struct used_element {
    uint32_t id;
    uint32_t length;
};

struct queue {
    uint16_t index;
    uint16_t size;
    volatile struct descriptor *descriptors;
    volatile uint16_t *avail; /* flags, idx, ring[size] */
    volatile uint16_t *used;  /* flags, idx, then used_element[size] */
    uint16_t last_used;
    uint8_t *buffers;         /* size * BUFFER_BYTES */
    uint64_t buffers_physical;
};

static struct {
    bool open;
    bool interrupts; /* false: the line belongs to another driver, poll */
    uint16_t io;
    uint8_t mac[6];
    struct queue receive, transmit;
    uint16_t free_transmit[MAX_QUEUE];
    unsigned free_transmit_count;
    uint64_t ticks_per_us;
    struct net_stats stats;
} net;

static uint64_t align_up(uint64_t value, uint64_t alignment)
{
    return (value + alignment - 1) & ~(alignment - 1);
}

static const volatile struct used_element *used_elements(const struct queue *queue)
{
    return (const volatile struct used_element *)(queue->used + 2);
}

/* Makes descriptor `id` available to the device (the caller notifies). */
static void queue_offer(struct queue *queue, uint16_t id)
{
    uint16_t index = queue->avail[1];
    queue->avail[2 + index % queue->size] = id;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    queue->avail[1] = (uint16_t)(index + 1);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void queue_notify(const struct queue *queue)
{
    port_out16(net.io + REGISTER_QUEUE_NOTIFY, queue->index);
}

/* Takes the next used element: true and its id and length, or false. */
static bool queue_take_used(struct queue *queue, uint16_t *id, uint32_t *length)
{
    if (queue->last_used == queue->used[1])
        return false;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    const volatile struct used_element *element =
        &used_elements(queue)[queue->last_used % queue->size];
    *id = (uint16_t)element->id;
    *length = element->length;
    queue->last_used++;
    return *id < queue->size;
}

/* The legacy split ring (descriptors, available ring, used ring on the next
 * page) and one buffer per descriptor, all in DMA memory. */
static long queue_set_up(struct queue *queue, uint16_t index, bool device_writes)
{
    port_out16(net.io + REGISTER_QUEUE_SELECT, index);
    uint16_t size = port_in16(net.io + REGISTER_QUEUE_SIZE);
    if (size == 0 || size > MAX_QUEUE)
        return -E_IO;
    uint64_t used_offset = align_up(16ull * size + 6 + 2ull * size, PAGE);
    uint64_t ring_bytes = used_offset + align_up(6 + 8ull * size, PAGE);
    struct dma_region ring, buffers;
    long result = dma_allocate(ring_bytes, &ring);
    if (result >= 0)
        result = dma_allocate((uint64_t)size * BUFFER_BYTES, &buffers);
    if (result < 0)
        return result;
    queue->index = index;
    queue->size = size;
    queue->descriptors = (volatile struct descriptor *)ring.address;
    queue->avail = (volatile uint16_t *)(ring.address + 16ull * size);
    queue->used = (volatile uint16_t *)(ring.address + used_offset);
    queue->buffers = (uint8_t *)buffers.address;
    queue->buffers_physical = buffers.physical;
    for (uint16_t id = 0; id < size; id++) {
        queue->descriptors[id].address = buffers.physical + (uint64_t)id * BUFFER_BYTES;
        queue->descriptors[id].length = BUFFER_BYTES;
        queue->descriptors[id].flags = device_writes ? DESCRIPTOR_WRITE : 0;
        queue->descriptors[id].next = 0;
    }
    port_out32(net.io + REGISTER_QUEUE_ADDRESS, (uint32_t)(ring.physical / PAGE));
    return 0;
}

static void fill_receive_queue(void)
{
    for (uint16_t id = 0; id < net.receive.size; id++)
        queue_offer(&net.receive, id);
    queue_notify(&net.receive);
}

static void set_up_transmit_slots(void)
{
    net.transmit.avail[0] = AVAIL_NO_INTERRUPT; /* completions are collected when sending */
    net.free_transmit_count = 0;
    for (uint16_t id = 0; id < net.transmit.size; id++)
        net.free_transmit[net.free_transmit_count++] = id;
}

static long start_device(const struct pci_function *function)
{
    bool is_io = false;
    uint64_t bar = pci_bar(function, 0, &is_io);
    if (!is_io || bar == 0)
        return -E_IO; /* a modern-only device: not supported */
    net.io = (uint16_t)bar;
    pci_enable(function);
    port_out8(net.io + REGISTER_STATUS, 0); /* reset */
    port_out8(net.io + REGISTER_STATUS, STATUS_ACKNOWLEDGE);
    port_out8(net.io + REGISTER_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER);
    uint32_t offered = port_in32(net.io + REGISTER_DEVICE_FEATURES);
    port_out32(net.io + REGISTER_GUEST_FEATURES, offered & FEATURE_MAC); /* no offloads */
    long result = queue_set_up(&net.receive, QUEUE_RECEIVE, true);
    if (result >= 0)
        result = queue_set_up(&net.transmit, QUEUE_TRANSMIT, false);
    if (result < 0) {
        port_out8(net.io + REGISTER_STATUS, STATUS_FAILED);
        return result;
    }
    for (unsigned i = 0; i < 6; i++)
        net.mac[i] = port_in8(net.io + REGISTER_MAC + i);
    set_up_transmit_slots();
    port_out8(net.io + REGISTER_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_DRIVER_OK);
    fill_receive_queue();
    return 0;
}

static void set_up_clock(void)
{
    struct clock_info clock;
    net.ticks_per_us = 1000;
    if (clock_get(&clock) >= 0 && clock.tsc_hz >= 1000000)
        net.ticks_per_us = clock.tsc_hz / 1000000;
}

long net_open(void)
{
    if (net.open)
        return 0;
    struct pci_function function;
    if (!pci_find_device(VIRTIO_VENDOR, VIRTIO_NET_TRANSITIONAL, 0, &function))
        return -E_NOT_FOUND;
    long gsi = irq_attach(function.interrupt_line); /* first: owning the line claims the device */
    net.interrupts = gsi >= 0;
    if (gsi == -E_BUSY)
        printf("net: interrupt line %u belongs to another driver; polling\n",
               function.interrupt_line);
    else if (gsi < 0)
        return gsi;
    set_up_clock();
    long result = start_device(&function);
    if (result < 0)
        return result;
    net.open = true;
    return 0;
}

void net_mac(uint8_t mac[6])
{
    memcpy(mac, net.mac, 6);
}

uint64_t net_now_us(void)
{
    return read_timestamp_counter() / (net.ticks_per_us ? net.ticks_per_us : 1000);
}

static void reclaim_transmit_slots(void)
{
    uint16_t id;
    uint32_t length;
    while (queue_take_used(&net.transmit, &id, &length))
        net.free_transmit[net.free_transmit_count++] = id;
}

long net_send(const void *frame, size_t length)
{
    if (!net.open || length < 14 || length > NET_FRAME_MAX)
        return -E_INVALID;
    reclaim_transmit_slots();
    while (net.free_transmit_count == 0) {
        yield();
        reclaim_transmit_slots();
    }
    uint16_t id = net.free_transmit[--net.free_transmit_count];
    uint8_t *buffer = net.transmit.buffers + (size_t)id * BUFFER_BYTES;
    memset(buffer, 0, NET_HEADER_BYTES);
    memcpy(buffer + NET_HEADER_BYTES, frame, length);
    net.transmit.descriptors[id].length = (uint32_t)(NET_HEADER_BYTES + length);
    queue_offer(&net.transmit, id);
    queue_notify(&net.transmit);
    net.stats.frames_sent++;
    net.stats.bytes_sent += length;
    return 0;
}

static bool addressed_to_us(const uint8_t *frame)
{
    static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    return memcmp(frame, net.mac, 6) == 0 || memcmp(frame, broadcast, 6) == 0;
}

/* One received frame for us, copied out and its buffer given back: its
 * length; 0 when the ring holds none. Frames for other MACs are dropped. */
static long take_frame(void *buffer, size_t capacity)
{
    uint16_t id;
    uint32_t length;
    while (queue_take_used(&net.receive, &id, &length)) {
        const uint8_t *data = net.receive.buffers + (size_t)id * BUFFER_BYTES + NET_HEADER_BYTES;
        long frame_length = length > NET_HEADER_BYTES ? (long)(length - NET_HEADER_BYTES) : 0;
        bool wanted = frame_length >= 14 && addressed_to_us(data);
        if (wanted) {
            if ((size_t)frame_length > capacity)
                frame_length = (long)capacity;
            memcpy(buffer, data, (size_t)frame_length);
        }
        queue_offer(&net.receive, id);
        queue_notify(&net.receive);
        if (wanted) {
            net.stats.frames_received++;
            net.stats.bytes_received += (uint64_t)frame_length;
            return frame_length;
        }
        net.stats.dropped_not_mine++;
    }
    return 0;
}

/* Sleeps until the device interrupts (reading ISR first acknowledges it, so
 * a frame arriving after the check raises the line again). */
static void wait_for_interrupt(void)
{
    port_in8(net.io + REGISTER_ISR);
    if (net.receive.last_used != net.receive.used[1])
        return;
    long count = irq_wait();
    if (count > 0)
        net.stats.interrupts += (uint64_t)count;
}

long net_receive(void *buffer, size_t capacity, uint64_t timeout_us)
{
    if (!net.open)
        return -E_INVALID;
    bool forever = timeout_us == NET_WAIT_FOREVER;
    uint64_t deadline = forever ? 0 : net_now_us() + timeout_us;
    for (;;) {
        long length = take_frame(buffer, capacity);
        if (length > 0)
            return length;
        if (forever && net.interrupts)
            wait_for_interrupt();
        else if (!forever && net_now_us() >= deadline)
            return 0;
        else
            yield();
    }
}

void net_statistics(struct net_stats *stats)
{
    *stats = net.stats;
}
