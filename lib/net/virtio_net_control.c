/* virtio_net_control.c: virtio-net's control queue (VIRTIO_NET_F_CTRL_VQ and
 * _CTRL_RX), used for one command: promiscuous mode off, so that the device
 * drops frames for other MACs (on the shared segment, most of them: every
 * machine's own frames come back to it) before they reach the guest. */
#include "virtio_net_control.h"
#include <formica/virtio_legacy.h>
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/net.h>
#include <formica/user.h>

#define QUEUE_CONTROL 2 /* after receive and transmit, without multiqueue */
#define CLASS_RX 0
#define COMMAND_PROMISCUOUS 0
#define ACK_OK 0
#define ANSWER_WAIT_US 1000000ull

struct command {
    uint8_t class, command, on; /* what the device reads */
    uint8_t padding[13];
    uint8_t ack; /* what it writes */
};

static struct virtqueue control;
static volatile struct command *command;

long virtio_net_control_set_up(uint16_t io)
{
    long result = virtqueue_set_up(&control, io, QUEUE_CONTROL, 1, 1024);
    if (result < 0)
        return result;
    struct dma_region page;
    result = dma_allocate(sizeof(struct command), &page);
    if (result < 0)
        return result;
    command = (volatile struct command *)page.address;
    control.avail[0] = VIRTQ_AVAIL_NO_INTERRUPT; /* the answer is polled for */
    virtqueue_set_descriptor(&control, 0, page.physical, 3, VIRTQ_DESCRIPTOR_NEXT, 1);
    virtqueue_set_descriptor(&control, 1, page.physical + 16, 1, VIRTQ_DESCRIPTOR_WRITE, 0);
    return 0;
}

long virtio_net_promiscuous(bool on)
{
    if (command == NULL)
        return -E_INVALID;
    command->class = CLASS_RX;
    command->command = COMMAND_PROMISCUOUS;
    command->on = on ? 1 : 0;
    command->ack = 0xff;
    virtqueue_add(&control, 0);
    virtqueue_notify(&control);
    uint64_t deadline = net_now_us() + ANSWER_WAIT_US;
    uint32_t id, length;
    while (!virtqueue_used_next(&control, &id, &length)) {
        if (net_now_us() > deadline)
            return -E_IO;
        yield();
    }
    return command->ack == ACK_OK ? 0 : -E_IO;
}
