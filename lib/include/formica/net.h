/* net.h: raw Ethernet frames over the network card PCI shows (virtio-net or an
 * Intel e1000e; the caller never needs to know which), for a process spawned
 * with SPAWN_DRIVER. Linked from build/out/libnet.a (lib/net/, see
 * docs/memnode.md and docs/drivers.md). One card per process. */
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
    uint64_t link_changes; /* link up or down, each said on the console */
};

/* Finds the first card (virtio-net, then e1000e), claims its interrupt, sets
 * up its receive and transmit rings and says on the console which card it
 * took. 0, -E_NOT_FOUND (no card), -E_BUSY (another driver owns it),
 * -E_NO_MEMORY or -E_IO (the card failed, e.g. its EEPROM: it is not used,
 * and later calls give the same error without touching it again). */
long net_open(void);
/* "virtio-net", "e1000e", or "none" before net_open succeeded. */
const char *net_card_kind(void);
/* Whether the card's link was up when it last looked (false before open). */
bool net_link_up(void);
/* The device's MAC address (valid after net_open). */
void net_mac(uint8_t mac[6]);
/* Sends one frame of 14-net_max_frame() bytes (the source MAC is the caller's to fill).
 * 0 or -E_INVALID; waits for a free transmit slot when all are in flight
 * (-E_IO when they stay held because the link is down). */
long net_send(const void *frame, size_t length);
/* Zero-copy sending: the next transmit buffer (waiting for a free one; NULL
 * when none frees up because the link is down), for a frame of up to
 * net_max_frame() bytes; net_send_buffered(length) sends what was written
 * there (0 gives the buffer back unsent: -E_INVALID). */
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
/* The longest frame the card and driver take: virtio-net's MTU + 14 when it
 * says one (VIRTIO_NET_F_MTU), at most NET_FRAME_MAX, else 9014 (jumbo);
 * e1000e 9014 (its 9 KiB jumbo frames). */
uint32_t net_max_frame(void);
/* Microseconds since boot on this core's TSC (for timeouts and bandwidth). */
uint64_t net_now_us(void);
void net_statistics(struct net_stats *stats);
