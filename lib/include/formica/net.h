/* net.h: raw Ethernet frames over a legacy virtio-net PCI device, for a process
 * spawned with SPAWN_DRIVER. Linked from build/out/libnet.a (lib/net/, see
 * docs/memnode.md). One device per process. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_FRAME_MAX 32814 /* Ethernet header + a 32800-byte payload (MTU), no FCS */
#define NET_WAIT_FOREVER UINT64_MAX

struct net_stats {
    uint64_t frames_sent, frames_received, bytes_sent, bytes_received;
    uint64_t dropped_not_mine; /* frames for another MAC (the segment is shared) */
    uint64_t interrupts;
};

/* Finds the first virtio-net function, claims its interrupt line, sets up the
 * receive and transmit queues. 0, -E_NOT_FOUND (no device), -E_BUSY (another
 * driver owns it), -E_NO_MEMORY or -E_IO. */
long net_open(void);
/* The device's MAC address (valid after net_open). */
void net_mac(uint8_t mac[6]);
/* Sends one frame of 14-net_max_frame() bytes (the source MAC is the caller's to fill).
 * 0 or -E_INVALID; waits for a free transmit slot when all are in flight. */
long net_send(const void *frame, size_t length);
/* Zero-copy sending: the next transmit buffer (waiting for a free one), for
 * a frame of up to net_max_frame() bytes; net_send_buffered(length) sends
 * what was written there (0 gives the buffer back unsent: -E_INVALID). */
void *net_send_buffer(void);
long net_send_buffered(size_t length);
/* net_receive without the copy: *frame points into the receive buffer, which
 * is lent until the next net_receive or net_receive_in_place. */
long net_receive_in_place(const void **frame, uint64_t timeout_us);
/* Receives one frame for this MAC (or broadcast) into `buffer`: its length,
 * or 0 when `timeout_us` microseconds passed without one. Sleeps in irq_wait
 * until a frame comes, a finite timeout ending at the timer tick after it;
 * polls, yielding between checks, when the interrupt line is another driver's. */
long net_receive(void *buffer, size_t capacity, uint64_t timeout_us);
/* Before a wait that the device's interrupt ends (irq_wait, or ica_receive
 * with ICA_OR_IRQ): acknowledges the interrupt and says whether such a wait
 * may sleep (no frame is waiting; false too when the driver polls). */
bool net_ready_to_sleep(void);
/* The longest frame the device and driver take: the device's MTU + 14 when it
 * says one (VIRTIO_NET_F_MTU), at most NET_FRAME_MAX; else 9014 (jumbo). */
uint32_t net_max_frame(void);
/* Microseconds since boot on this core's TSC (for timeouts and bandwidth). */
uint64_t net_now_us(void);
void net_statistics(struct net_stats *stats);
