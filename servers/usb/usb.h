/* usb.h: USB, the USB host driver (program "usb", spawned with SPAWN_DRIVER):
 * one xHCI controller, the devices on its root ports, and the HID boot
 * keyboards among them, whose keys it types into the console input
 * (SYS_CONSOLE_INPUT). Hubs, and devices that are not keyboards, are found
 * and left alone. docs/drivers.md says why this is a process and not kernel code. */
#pragma once
#include "hid_keyboard.h"
#include "xhci_spec.h"
#include <formica/pci.h>
#include <formica/pci_interrupt.h>
#include <stdbool.h>
#include <stdint.h>

#define USB_MAX_DEVICES 8
#define USB_RING_TRBS 256 /* a page of TRBs, the last one the link back */
#define USB_PAGE 4096

/* A producer ring (commands, a control or an interrupt endpoint) in DMA memory. */
struct trb_ring {
    volatile struct xhci_trb *trbs;
    uint64_t physical;
    uint32_t index; /* where the next TRB goes */
    uint32_t cycle; /* the producer's cycle bit */
};

struct usb_device {
    bool used;
    uint32_t port, slot, speed;
    uint32_t max_packet0;      /* endpoint 0's largest packet */
    volatile uint8_t *context; /* the controller's output device context */
    uint64_t context_physical;
    struct trb_ring control;  /* endpoint 0 */
    volatile uint8_t *buffer; /* control data from 0, the keyboard's report at REPORT_OFFSET */
    uint64_t buffer_physical;
    bool control_done; /* the control transfer under way has its event */
    uint32_t control_completion;
    /* The keyboard, when the device is one. */
    bool keyboard;
    uint32_t keyboard_endpoint; /* its interrupt IN endpoint's device context index */
    uint32_t report_bytes;
    struct trb_ring interrupt;
    struct hid_keyboard hid;
};
#define USB_REPORT_OFFSET 2048

struct usb_driver {
    struct pci_function function;
    volatile uint8_t *capability, *operational, *runtime;
    volatile uint32_t *doorbells;
    uint32_t max_slots, ports, context_bytes, scratchpads;
    volatile uint64_t *device_contexts; /* DCBAA: slot -> its output context */
    uint64_t device_contexts_physical;
    struct trb_ring commands;
    volatile struct xhci_trb *events;
    uint64_t events_physical;
    uint32_t event_index, event_cycle;
    volatile uint8_t *input; /* the input context of the command under way */
    uint64_t input_physical;
    bool command_done;
    uint32_t command_completion, command_slot;
    bool ports_changed;
    enum pci_interrupt_kind interrupt;
    struct usb_device devices[USB_MAX_DEVICES];
    uint32_t device_count, keyboard_count;
    uint64_t reports, bytes_typed;
};

/* xhci_controller.c */
bool xhci_find(struct usb_driver *driver);
bool xhci_start(struct usb_driver *driver);
/* A zeroed page of DMA memory (its physical address in *physical), or NULL. */
volatile void *xhci_dma_page(uint64_t *physical);
uint32_t xhci_read(volatile uint8_t *base, uint32_t offset);
void xhci_write(volatile uint8_t *base, uint32_t offset, uint32_t value);
void xhci_write64(volatile uint8_t *base, uint32_t offset, uint64_t value);
/* Clears the interrupt's pending flags, before the events are taken. */
void xhci_acknowledge_interrupt(struct usb_driver *driver);

/* xhci_rings.c */
void ring_init(struct trb_ring *ring, volatile void *page, uint64_t physical);
void ring_put(struct trb_ring *ring, uint64_t parameter, uint32_t status, uint32_t control);
void xhci_ring_doorbell(struct usb_driver *driver, uint32_t slot, uint32_t target);
/* Takes every event the controller has written (command completions,
 * transfers, port changes) and hands each on. */
void xhci_take_events(struct usb_driver *driver);
/* Runs a command TRB; its completion code (XHCI_COMPLETION_SUCCESS ...), or
 * 0 when none came within the bound. */
uint32_t xhci_command(struct usb_driver *driver, uint64_t parameter, uint32_t control);
/* A control transfer on endpoint 0; IN data lands in the device's buffer.
 * The completion code, or 0 on a timeout. */
uint32_t usb_control(struct usb_driver *driver, struct usb_device *device, uint8_t type,
                     uint8_t request, uint16_t value, uint16_t index, uint16_t length);

/* usb_device.c */
/* Looks at every root port with a device on it that is not yet addressed. */
void usb_scan_ports(struct usb_driver *driver);
/* Queues the keyboard's next report transfer. */
void usb_queue_report(struct usb_driver *driver, struct usb_device *device);
struct usb_device *usb_device_of_slot(struct usb_driver *driver, uint32_t slot);
