/* net_driver.h: what a network card's driver gives lib/net/net_device.c,
 * the one implementation of formica/net.h. A driver owns its card, rings and
 * buffers; net_device.c chooses the card, waits for frames, filters them by
 * MAC, counts them and reports the link (docs/drivers.md, "Network cards"). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a driver's open found out about its card. */
struct net_card {
    uint8_t mac[6];
    uint32_t max_frame;         /* the longest frame, Ethernet header included, FCS excluded */
    bool interrupts;            /* false: the interrupt is another driver's; net_device.c polls */
    bool link_up;               /* the link when the card started */
    char where[16];             /* the PCI function, "bb:dd.f" */
    const char *interrupt_kind; /* "msi" or "intx" (when interrupts is true) */
};

struct net_driver {
    const char *name; /* "virtio-net", "e1000e" */
    /* Finds the first card of its kind and starts it: 0 and *card filled,
     * -E_NOT_FOUND when there is none, another error (with a console line
     * saying why) when the card is there but not used. */
    long (*open)(struct net_card *card);
    /* The next free transmit buffer of max_frame bytes, or NULL while every
     * buffer is in flight (finished ones are reclaimed here). */
    uint8_t *(*transmit_buffer)(void);
    /* Sends the `length` bytes written into that buffer. */
    void (*transmit)(size_t length);
    /* Gives that buffer back unsent. */
    void (*transmit_cancel)(void);
    /* The next received frame, left in its buffer until receive_release:
     * its length, or 0 when none is waiting. */
    long (*receive)(const uint8_t **frame);
    /* Gives the buffer of the last frame receive returned back to the card. */
    void (*receive_release)(void);
    /* Acknowledges the card's interrupt and notes link changes, then says
     * whether a received frame is waiting: a wait started after false is
     * ended by the next frame's interrupt, never missed. */
    bool (*acknowledge)(void);
    /* The link as the card said at the last acknowledge. */
    bool (*link_up)(void);
};

extern const struct net_driver virtio_net_driver;
extern const struct net_driver e1000e_driver;

/* The card's PCI address as "bb:dd.f" into card->where. */
struct pci_function;
void net_card_name_location(struct net_card *card, const struct pci_function *function);
