/* net_device.c: formica/net.h over whichever network card PCI shows (virtio-net,
 * then the Intel e1000e): the choice of card, the waits for frames (interrupt
 * or polling), the MAC filter, the counters and the link reports. The cards'
 * own work is in their drivers (net_driver.h); callers never see which it is. */
#include "net_driver.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/net.h>
#include <formica/pci.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define JUMBO_FRAME 9014 /* before a card is open: what every card here carries */

static const struct net_driver *const drivers[] = {&virtio_net_driver, &e1000e_driver};

static struct {
    const struct net_driver *driver; /* NULL until net_open succeeded */
    long open_failure;               /* the error of a card found but not used */
    struct net_card card;
    bool link_up;
    uint8_t *filling; /* the transmit buffer net_send_buffer gave out */
    bool holding;     /* a received frame is lent to the caller */
    uint64_t ticks_per_us;
    struct net_stats stats;
} net;

void net_card_name_location(struct net_card *card, const struct pci_function *function)
{
    snprintf(card->where, sizeof(card->where), "%02x:%02x.%u", function->bus, function->device,
             function->function);
}

static void set_up_clock(void)
{
    struct clock_info clock;
    net.ticks_per_us = 1000;
    if (clock_get(&clock) >= 0 && clock.tsc_hz >= 1000000)
        net.ticks_per_us = clock.tsc_hz / 1000000;
}

static void say_opened(void)
{
    const uint8_t *mac = net.card.mac;
    printf("net: %s at %s, MAC %02x:%02x:%02x:%02x:%02x:%02x, frames up to %u bytes, "
           "%s%s, link %s\n",
           net.driver->name, net.card.where, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
           net.card.max_frame, net.card.interrupts ? net.card.interrupt_kind : "polled",
           net.card.interrupts ? " interrupts" : " (no interrupt)", net.link_up ? "up" : "down");
}

/* The first card a driver finds and starts. A card that is there but fails
 * (its driver said why) is not used, and the next kind is tried. */
long net_open(void)
{
    if (net.driver != NULL)
        return 0;
    if (net.open_failure != 0)
        return net.open_failure; /* a failed card is not touched again */
    set_up_clock();
    long failure = 0;
    for (unsigned i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
        struct net_card card = {.interrupt_kind = "intx"};
        long result = drivers[i]->open(&card);
        if (result == -E_NOT_FOUND)
            continue;
        if (result < 0) {
            failure = failure ? failure : result;
            continue;
        }
        net.card = card;
        net.link_up = card.link_up;
        net.driver = drivers[i];
        say_opened();
        return 0;
    }
    net.open_failure = failure;
    return failure ? failure : -E_NOT_FOUND;
}

const char *net_card_kind(void)
{
    return net.driver ? net.driver->name : "none";
}

void net_mac(uint8_t mac[6])
{
    memcpy(mac, net.card.mac, 6);
}

uint32_t net_max_frame(void)
{
    return net.driver ? net.card.max_frame : JUMBO_FRAME;
}

uint64_t net_now_us(void)
{
    return read_timestamp_counter() / (net.ticks_per_us ? net.ticks_per_us : 1000);
}

/* The card's interrupt acknowledged and its link compared with the last one
 * reported: a change is said on the console. True when a frame waits. */
static bool acknowledge(void)
{
    bool waiting = net.driver->acknowledge();
    bool up = net.driver->link_up();
    if (up != net.link_up) {
        net.link_up = up;
        net.stats.link_changes++;
        printf("net: %s at %s: link %s\n", net.driver->name, net.card.where,
               up ? "up" : "down (frames cannot be sent or received)");
    }
    return waiting;
}

/* Up: as the last acknowledge saw it (a link going down stops the frames, and
 * the wait that follows sees it). Down: looked at again now, so whoever waits
 * for the link's return sees it without a wait of its own. */
bool net_link_up(void)
{
    if (net.driver == NULL)
        return false;
    if (!net.link_up)
        acknowledge();
    return net.link_up;
}

void *net_send_buffer(void)
{
    if (net.driver == NULL)
        return NULL;
    while (net.filling == NULL) {
        net.filling = net.driver->transmit_buffer();
        if (net.filling != NULL)
            break;
        acknowledge();
        if (!net.link_up)
            return NULL; /* a card without a link may never finish what it holds */
        yield();
    }
    return net.filling;
}

long net_send_buffered(size_t length)
{
    if (net.driver == NULL || net.filling == NULL)
        return -E_INVALID;
    net.filling = NULL;
    if (length < 14 || length > net.card.max_frame) {
        net.driver->transmit_cancel();
        return -E_INVALID;
    }
    net.driver->transmit(length);
    net.stats.frames_sent++;
    net.stats.bytes_sent += length;
    return 0;
}

long net_send(const void *frame, size_t length)
{
    if (net.driver == NULL || length < 14 || length > net.card.max_frame)
        return -E_INVALID;
    void *buffer = net_send_buffer();
    if (buffer == NULL)
        return -E_IO; /* the link is down and every buffer is held */
    memcpy(buffer, frame, length);
    return net_send_buffered(length);
}

static bool addressed_to_us(const uint8_t *frame)
{
    static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    return memcmp(frame, net.card.mac, 6) == 0 || memcmp(frame, broadcast, 6) == 0;
}

static void release_held(void)
{
    if (!net.holding)
        return;
    net.driver->receive_release();
    net.holding = false;
}

/* One received frame for us, left in its buffer (held until the next
 * receive): its length, or 0 when none waits. Others' frames are dropped. */
static long take_frame(const uint8_t **frame)
{
    release_held();
    const uint8_t *data;
    long length;
    while ((length = net.driver->receive(&data)) > 0) {
        if (length >= 14 && addressed_to_us(data)) {
            net.holding = true;
            net.stats.frames_received++;
            net.stats.bytes_received += (uint64_t)length;
            *frame = data;
            return length;
        }
        net.driver->receive_release();
        net.stats.dropped_not_mine++;
    }
    return 0;
}

/* Sleeps until the card interrupts or `timeout_ms` passed (0: no limit);
 * the acknowledge before it means a frame arriving after the check
 * interrupts again and is not lost. */
static void wait_for_interrupt(uint64_t timeout_ms)
{
    if (acknowledge())
        return;
    long count = timeout_ms ? irq_wait_timeout(timeout_ms) : irq_wait();
    if (count > 0)
        net.stats.interrupts += (uint64_t)count;
}

bool net_ready_to_sleep(void)
{
    if (net.driver == NULL || !net.card.interrupts)
        return false;
    return !acknowledge();
}

long net_receive_in_place(const void **frame, uint64_t timeout_us)
{
    if (net.driver == NULL)
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
        if (!net.card.interrupts) {
            acknowledge(); /* the link is seen while polling too */
            yield();
        } else { /* a timed wait ends at a timer tick at the latest */
            wait_for_interrupt(forever ? 0 : (deadline - now + 999) / 1000);
        }
    }
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
    release_held();
    return length;
}

void net_statistics(struct net_stats *stats)
{
    *stats = net.stats;
}
