/* virtio_net.c: virtio-net through the legacy (transitional) PCI interface: MAC
 * and MTU from the device configuration, receive queue 0 and transmit queue 1
 * with one 32 KiB DMA buffer per descriptor, INTx for receive (waits with a
 * deadline sleep in irq_wait too). The transport and the rings are
 * lib/virtio/virtio_legacy.c's. */
#include <formica/virtio_legacy.h>
#include <formica/net.h>
#include "virtio_net_control.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/pci.h>
#include <formica/port_io.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define VIRTIO_NET_TRANSITIONAL 0x1000
#define REGISTER_MAC VIRTIO_LEGACY_DEVICE_CONFIG
#define REGISTER_MTU (VIRTIO_LEGACY_DEVICE_CONFIG + 10) /* after mac, status, queue pairs */
#define FEATURE_MTU (1u << 3) /* the device says its MTU (QEMU: host_mtu=) */
#define FEATURE_MAC (1u << 5)
#define FEATURE_CONTROL_QUEUE (1u << 17)
#define FEATURE_CONTROL_RX (1u << 18) /* promiscuous mode can be turned off */
#define FEATURES_FILTER (FEATURE_CONTROL_QUEUE | FEATURE_CONTROL_RX)
#define QUEUE_RECEIVE 0
#define QUEUE_TRANSMIT 1
#define NET_HEADER_BYTES 10 /* legacy virtio_net_hdr without mergeable buffers */
#define BUFFER_BYTES (NET_HEADER_BYTES + NET_FRAME_MAX)
#define JUMBO_FRAME 9014 /* a device that does not say its MTU: jumbo frames (MTU 9000) */
#define MAX_QUEUE 256
/* Buffers per queue (descriptors beyond are unused): the same DMA memory as
 * 256 jumbo buffers each, and more than the host's socket buffer holds. */
#define RECEIVE_BUFFERS 96
#define TRANSMIT_BUFFERS 48

struct queue {
    struct virtqueue ring;
    uint16_t buffer_count; /* descriptors 0..buffer_count-1 have a buffer */
    uint8_t *buffers;      /* buffer_count * BUFFER_BYTES */
    uint64_t buffers_physical;
};

static struct {
    bool open;
    bool interrupts; /* false: the line belongs to another driver, poll */
    uint16_t io;
    uint8_t mac[6];
    uint32_t max_frame;
    struct queue receive, transmit;
    uint16_t free_transmit[MAX_QUEUE];
    unsigned free_transmit_count;
    int32_t filling;      /* the transmit slot net_send_buffer gave out, or -1 */
    int32_t held_receive; /* the receive buffer net_receive_in_place lent, or -1 */
    uint64_t ticks_per_us;
    struct net_stats stats;
} net;

/* Takes the next used element: true and its id and length, or false (none,
 * or an id outside the queue). */
static bool queue_take_used(struct queue *queue, uint16_t *id, uint32_t *length)
{
    uint32_t used_id;
    if (!virtqueue_used_next(&queue->ring, &used_id, length))
        return false;
    *id = (uint16_t)used_id;
    return *id < queue->ring.size;
}

/* The queue's rings and one buffer per descriptor, all in DMA memory. */
static long queue_set_up(struct queue *queue, uint16_t index, bool device_writes,
                         uint16_t buffer_count)
{
    long result = virtqueue_set_up(&queue->ring, net.io, index, 1, MAX_QUEUE);
    if (result < 0)
        return result;
    uint16_t size = queue->ring.size < buffer_count ? queue->ring.size : buffer_count;
    struct dma_region buffers;
    result = dma_allocate((uint64_t)size * BUFFER_BYTES, &buffers);
    if (result < 0)
        return result;
    queue->buffer_count = size;
    queue->buffers = (uint8_t *)buffers.address;
    queue->buffers_physical = buffers.physical;
    for (uint16_t id = 0; id < size; id++)
        virtqueue_set_descriptor(&queue->ring, id, buffers.physical + (uint64_t)id * BUFFER_BYTES,
                                 BUFFER_BYTES, device_writes ? VIRTQ_DESCRIPTOR_WRITE : 0, 0);
    return 0;
}

static void fill_receive_queue(void)
{
    for (uint16_t id = 0; id < net.receive.buffer_count; id++)
        virtqueue_add(&net.receive.ring, id);
    virtqueue_notify(&net.receive.ring);
}

static void set_up_transmit_slots(void)
{
    /* completions are collected when sending */
    net.transmit.ring.avail[0] = VIRTQ_AVAIL_NO_INTERRUPT;
    net.free_transmit_count = 0;
    net.filling = -1;
    net.held_receive = -1;
    for (uint16_t id = 0; id < net.transmit.buffer_count; id++)
        net.free_transmit[net.free_transmit_count++] = id;
}

/* The device's MTU plus the Ethernet header when it says one (within our
 * buffers), else a jumbo frame as before VIRTIO_NET_F_MTU. */
static uint32_t device_max_frame(void)
{
    if (!(virtio_legacy_features(net.io) & FEATURE_MTU))
        return JUMBO_FRAME;
    uint32_t frame = (uint32_t)port_in16(net.io + REGISTER_MTU) + 14;
    return frame < NET_FRAME_MAX ? frame : NET_FRAME_MAX;
}

static long start_device(const struct pci_function *function)
{
    /* the MAC address and the MTU, no offloads */
    long result =
        virtio_legacy_start(function, FEATURE_MAC | FEATURE_MTU | FEATURES_FILTER, &net.io);
    if (result < 0)
        return result; /* a modern-only device: not supported */
    result = queue_set_up(&net.receive, QUEUE_RECEIVE, true, RECEIVE_BUFFERS);
    if (result >= 0)
        result = queue_set_up(&net.transmit, QUEUE_TRANSMIT, false, TRANSMIT_BUFFERS);
    bool filter = (virtio_legacy_features(net.io) & FEATURES_FILTER) == FEATURES_FILTER;
    if (result >= 0 && filter)
        result = virtio_net_control_set_up(net.io);
    if (result < 0) {
        virtio_legacy_failed(net.io);
        return result;
    }
    for (unsigned i = 0; i < 6; i++)
        net.mac[i] = port_in8(net.io + REGISTER_MAC + i);
    net.max_frame = device_max_frame();
    set_up_transmit_slots();
    virtio_legacy_driver_ok(net.io);
    fill_receive_queue();
    /* QEMU starts promiscuous: every frame on the segment would reach us */
    if (filter && virtio_net_promiscuous(false, net.ticks_per_us) < 0)
        printf("net: the device keeps promiscuous mode; frames for others are dropped here\n");
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

uint32_t net_max_frame(void)
{
    return net.max_frame ? net.max_frame : JUMBO_FRAME;
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

void *net_send_buffer(void)
{
    if (!net.open)
        return NULL;
    if (net.filling < 0) {
        reclaim_transmit_slots();
        while (net.free_transmit_count == 0) {
            yield();
            reclaim_transmit_slots();
        }
        net.filling = net.free_transmit[--net.free_transmit_count];
    }
    return net.transmit.buffers + (size_t)net.filling * BUFFER_BYTES + NET_HEADER_BYTES;
}

long net_send_buffered(size_t length)
{
    if (!net.open || net.filling < 0)
        return -E_INVALID;
    uint16_t id = (uint16_t)net.filling;
    net.filling = -1;
    if (length < 14 || length > net.max_frame) {
        net.free_transmit[net.free_transmit_count++] = id; /* not sent: the slot is free again */
        return -E_INVALID;
    }
    memset(net.transmit.buffers + (size_t)id * BUFFER_BYTES, 0, NET_HEADER_BYTES);
    net.transmit.ring.descriptors[id].length = (uint32_t)(NET_HEADER_BYTES + length);
    virtqueue_add(&net.transmit.ring, id);
    virtqueue_notify_if_wanted(&net.transmit.ring);
    net.stats.frames_sent++;
    net.stats.bytes_sent += length;
    return 0;
}

long net_send(const void *frame, size_t length)
{
    if (!net.open || length < 14 || length > net.max_frame)
        return -E_INVALID;
    void *buffer = net_send_buffer();
    memcpy(buffer, frame, length);
    return net_send_buffered(length);
}

static bool addressed_to_us(const uint8_t *frame)
{
    static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    return memcmp(frame, net.mac, 6) == 0 || memcmp(frame, broadcast, 6) == 0;
}

static void give_back(uint16_t id)
{
    virtqueue_add(&net.receive.ring, id);
    virtqueue_notify_if_wanted(&net.receive.ring);
}

/* The buffer net_receive_in_place lent goes back to the device. */
static void give_back_held(void)
{
    if (net.held_receive < 0)
        return;
    give_back((uint16_t)net.held_receive);
    net.held_receive = -1;
}

/* One received frame for us, left in its buffer (held: given back by the
 * next receive): its length and *frame; 0 when the ring holds none. Frames
 * for other MACs are dropped. */
static long take_frame(const uint8_t **frame)
{
    uint16_t id;
    uint32_t length;
    give_back_held();
    while (queue_take_used(&net.receive, &id, &length)) {
        const uint8_t *data = net.receive.buffers + (size_t)id * BUFFER_BYTES + NET_HEADER_BYTES;
        long frame_length = length > NET_HEADER_BYTES ? (long)(length - NET_HEADER_BYTES) : 0;
        if (frame_length >= 14 && addressed_to_us(data)) {
            net.held_receive = id;
            net.stats.frames_received++;
            net.stats.bytes_received += (uint64_t)frame_length;
            *frame = data;
            return frame_length;
        }
        give_back(id);
        net.stats.dropped_not_mine++;
    }
    return 0;
}

/* Sleeps until the device interrupts, or `timeout_ms` (0: no limit) passed
 * (reading ISR first acknowledges it, so a frame arriving after the check
 * raises the line again). */
static void wait_for_interrupt(uint64_t timeout_ms)
{
    virtio_legacy_interrupt_status(net.io);
    if (virtqueue_has_used(&net.receive.ring))
        return;
    long count = timeout_ms ? irq_wait_timeout(timeout_ms) : irq_wait();
    if (count > 0)
        net.stats.interrupts += (uint64_t)count;
}

bool net_ready_to_sleep(void)
{
    if (!net.open || !net.interrupts)
        return false;
    virtio_legacy_interrupt_status(net.io);
    return !virtqueue_has_used(&net.receive.ring);
}

long net_receive(void *buffer, size_t capacity, uint64_t timeout_us)
{
    const void *frame;
    long length = net_receive_in_place(&frame, timeout_us);
    if (length <= 0)
        return length;
    if ((size_t)length > capacity)
        length = (long)capacity;
    memcpy(buffer, frame, (size_t)length);
    give_back_held();
    return length;
}

long net_receive_in_place(const void **frame, uint64_t timeout_us)
{
    if (!net.open)
        return -E_INVALID;
    bool forever = timeout_us == NET_WAIT_FOREVER;
    uint64_t deadline = forever ? 0 : net_now_us() + timeout_us;
    for (;;) {
        const uint8_t *data;
        long length = take_frame(&data);
        if (length > 0) {
            *frame = data;
            return length;
        }
        uint64_t now = net_now_us();
        if (!forever && now >= deadline)
            return 0;
        if (!net.interrupts)
            yield();
        else /* a timed wait ends at a timer tick at the latest */
            wait_for_interrupt(forever ? 0 : (deadline - now + 999) / 1000);
    }
}

void net_statistics(struct net_stats *stats)
{
    *stats = net.stats;
}
