/* virtio_net.c: the virtio-net driver behind net_device.c, through the legacy
 * (transitional) PCI interface: MAC, MTU and link status from the device
 * configuration, receive queue 0 and transmit queue 1 with one 32 KiB DMA
 * buffer per descriptor, MSI-X (entry 0, for the receive queue and the
 * configuration) or else INTx. The transport and the rings are
 * lib/virtio/virtio_legacy.c's. */
#include "net_driver.h"
#include "virtio_net_control.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/net.h>
#include <formica/pci.h>
#include <formica/pci_interrupt.h>
#include <formica/port_io.h>
#include <formica/user.h>
#include <formica/virtio_legacy.h>
#include <stdio.h>
#include <string.h>

#define VIRTIO_NET_TRANSITIONAL 0x1000
/* In the device configuration (device.config: where it starts). */
#define CONFIG_MAC 0
#define CONFIG_STATUS 6       /* after the MAC */
#define CONFIG_MTU 10         /* after mac, status, queue pairs */
#define FEATURE_MTU (1u << 3) /* the device says its MTU (QEMU: host_mtu=) */
#define FEATURE_MAC (1u << 5)
#define FEATURE_STATUS (1u << 16) /* the link's state in the configuration */
#define FEATURE_CONTROL_QUEUE (1u << 17)
#define FEATURE_CONTROL_RX (1u << 18) /* promiscuous mode can be turned off */
#define FEATURES_FILTER (FEATURE_CONTROL_QUEUE | FEATURE_CONTROL_RX)
#define STATUS_LINK_UP 1u
#define ISR_CONFIGURATION_CHANGED 2u
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
};

static struct {
    uint16_t io;
    uint16_t config; /* the device configuration's register (moved by MSI-X) */
    bool msix;       /* MSI-X on: no ISR; the link is read at every acknowledge */
    bool link_up;
    struct queue receive, transmit;
    uint16_t free_transmit[MAX_QUEUE];
    unsigned free_transmit_count;
    int32_t filling;      /* the transmit slot transmit_buffer gave out, or -1 */
    int32_t held_receive; /* the receive buffer receive lent, or -1 */
} device;

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
    long result = virtqueue_set_up(&queue->ring, device.io, index, 1, MAX_QUEUE);
    if (result < 0)
        return result;
    uint16_t size = queue->ring.size < buffer_count ? queue->ring.size : buffer_count;
    struct dma_region buffers;
    result = dma_allocate((uint64_t)size * BUFFER_BYTES, &buffers);
    if (result < 0)
        return result;
    queue->buffer_count = size;
    queue->buffers = (uint8_t *)buffers.address;
    for (uint16_t id = 0; id < size; id++)
        virtqueue_set_descriptor(&queue->ring, id, buffers.physical + (uint64_t)id * BUFFER_BYTES,
                                 BUFFER_BYTES, device_writes ? VIRTQ_DESCRIPTOR_WRITE : 0, 0);
    return 0;
}

static void fill_receive_queue(void)
{
    for (uint16_t id = 0; id < device.receive.buffer_count; id++)
        virtqueue_add(&device.receive.ring, id);
    virtqueue_notify(&device.receive.ring);
}

static void set_up_transmit_slots(void)
{
    /* completions are collected when sending */
    device.transmit.ring.avail[0] = VIRTQ_AVAIL_NO_INTERRUPT;
    device.free_transmit_count = 0;
    device.filling = -1;
    device.held_receive = -1;
    for (uint16_t id = 0; id < device.transmit.buffer_count; id++)
        device.free_transmit[device.free_transmit_count++] = id;
}

/* The device's MTU plus the Ethernet header when it says one (within our
 * buffers), else a jumbo frame as before VIRTIO_NET_F_MTU. */
static uint32_t device_max_frame(void)
{
    if (!(virtio_legacy_features(device.io) & FEATURE_MTU))
        return JUMBO_FRAME;
    uint32_t frame = (uint32_t)port_in16(device.config + CONFIG_MTU) + 14;
    return frame < NET_FRAME_MAX ? frame : NET_FRAME_MAX;
}

/* Without VIRTIO_NET_F_STATUS the link counts as always up. */
static bool read_link(void)
{
    if (!(virtio_legacy_features(device.io) & FEATURE_STATUS))
        return true;
    return (port_in16(device.config + CONFIG_STATUS) & STATUS_LINK_UP) != 0;
}

/* MSI-X on: the receive queue and configuration changes signal entry 0
 * (the transmit queue raises none: its completions are collected when
 * sending). False when the device refuses the vector (logged). */
static bool route_interrupts(struct net_card *card)
{
    const uint16_t receive = QUEUE_RECEIVE;
    if (virtio_legacy_route_to_vector_0(device.io, &receive, 1) == 0)
        return true;
    printf("net: virtio-net at %s: the device refused MSI-X vector 0\n", card->where);
    return false;
}

static long start_device(const struct pci_function *function, struct net_card *card)
{
    /* the MAC address, the MTU and the link, no offloads */
    long result = virtio_legacy_start(
        function, FEATURE_MAC | FEATURE_MTU | FEATURE_STATUS | FEATURES_FILTER, &device.io);
    if (result < 0)
        return result; /* a modern-only device: not supported */
    device.config = (uint16_t)(device.io + (device.msix ? VIRTIO_LEGACY_DEVICE_CONFIG_MSIX
                                                        : VIRTIO_LEGACY_DEVICE_CONFIG));
    result = queue_set_up(&device.receive, QUEUE_RECEIVE, true, RECEIVE_BUFFERS);
    if (result >= 0)
        result = queue_set_up(&device.transmit, QUEUE_TRANSMIT, false, TRANSMIT_BUFFERS);
    bool filter = (virtio_legacy_features(device.io) & FEATURES_FILTER) == FEATURES_FILTER;
    if (result >= 0 && filter)
        result = virtio_net_control_set_up(device.io);
    if (result < 0) {
        virtio_legacy_failed(device.io);
        return result;
    }
    if (device.msix && !route_interrupts(card)) {
        virtio_legacy_failed(device.io);
        return -E_IO;
    }
    for (unsigned i = 0; i < 6; i++)
        card->mac[i] = port_in8(device.config + CONFIG_MAC + i);
    card->max_frame = device_max_frame();
    set_up_transmit_slots();
    virtio_legacy_driver_ok(device.io);
    fill_receive_queue();
    device.link_up = card->link_up = read_link();
    /* QEMU starts promiscuous: every frame on the segment would reach us */
    if (filter && virtio_net_promiscuous(false) < 0)
        printf("net: the device keeps promiscuous mode; frames for others are dropped here\n");
    return 0;
}

static long virtio_net_open(struct net_card *card)
{
    struct pci_function function;
    if (!pci_find_device(VIRTIO_VENDOR, VIRTIO_NET_TRANSITIONAL, 0, &function))
        return -E_NOT_FOUND;
    pci_enable(&function); /* the MSI-X table is in a memory BAR */
    /* first: the vector (or the line) is the claim on the card; a line
     * another driver holds leaves it polled */
    long kind = pci_interrupt_attach(&function, "net: virtio-net",
                                     PCI_INTERRUPT_TAKES_MSIX | PCI_INTERRUPT_TAKES_INTX);
    if (kind < 0)
        return kind;
    card->interrupts = kind != PCI_INTERRUPT_NONE;
    card->interrupt_kind = pci_interrupt_name((enum pci_interrupt_kind)kind);
    device.msix = kind == PCI_INTERRUPT_MSIX;
    net_card_name_location(card, &function);
    return start_device(&function, card);
}

static void reclaim_transmit_slots(void)
{
    uint16_t id;
    uint32_t length;
    while (queue_take_used(&device.transmit, &id, &length))
        device.free_transmit[device.free_transmit_count++] = id;
}

static uint8_t *virtio_net_transmit_buffer(void)
{
    reclaim_transmit_slots();
    if (device.free_transmit_count == 0)
        return NULL;
    device.filling = device.free_transmit[--device.free_transmit_count];
    return device.transmit.buffers + (size_t)device.filling * BUFFER_BYTES + NET_HEADER_BYTES;
}

static void virtio_net_transmit(size_t length)
{
    uint16_t id = (uint16_t)device.filling;
    device.filling = -1;
    memset(device.transmit.buffers + (size_t)id * BUFFER_BYTES, 0, NET_HEADER_BYTES);
    device.transmit.ring.descriptors[id].length = (uint32_t)(NET_HEADER_BYTES + length);
    virtqueue_add(&device.transmit.ring, id);
    virtqueue_notify_if_wanted(&device.transmit.ring);
}

static void virtio_net_transmit_cancel(void)
{
    device.free_transmit[device.free_transmit_count++] = (uint16_t)device.filling;
    device.filling = -1;
}

static long virtio_net_receive(const uint8_t **frame)
{
    uint16_t id;
    uint32_t length;
    while (queue_take_used(&device.receive, &id, &length)) {
        device.held_receive = id;
        if (length > NET_HEADER_BYTES) {
            *frame = device.receive.buffers + (size_t)id * BUFFER_BYTES + NET_HEADER_BYTES;
            return (long)(length - NET_HEADER_BYTES);
        }
        virtqueue_add(&device.receive.ring, id); /* nothing after the header */
        virtqueue_notify_if_wanted(&device.receive.ring);
    }
    device.held_receive = -1;
    return 0;
}

static void virtio_net_receive_release(void)
{
    if (device.held_receive < 0)
        return;
    virtqueue_add(&device.receive.ring, (uint16_t)device.held_receive);
    virtqueue_notify_if_wanted(&device.receive.ring);
    device.held_receive = -1;
}

/* Reading ISR acknowledges the level-triggered INTx (and says whether the
 * configuration, where the link status is, changed). */
static bool virtio_net_acknowledge(void)
{
    if (device.msix)
        device.link_up = read_link(); /* a configuration change comes as vector 0 too */
    else if (virtio_legacy_interrupt_status(device.io) & ISR_CONFIGURATION_CHANGED)
        device.link_up = read_link();
    return virtqueue_has_used(&device.receive.ring);
}

static bool virtio_net_link_up(void)
{
    return device.link_up;
}

const struct net_driver virtio_net_driver = {
    .name = "virtio-net",
    .open = virtio_net_open,
    .transmit_buffer = virtio_net_transmit_buffer,
    .transmit = virtio_net_transmit,
    .transmit_cancel = virtio_net_transmit_cancel,
    .receive = virtio_net_receive,
    .receive_release = virtio_net_receive_release,
    .acknowledge = virtio_net_acknowledge,
    .link_up = virtio_net_link_up,
};
