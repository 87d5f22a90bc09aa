/* xhci_rings.c: the producer rings (commands and transfers: a page of TRBs
 * whose last one links back, toggling the cycle bit), the event ring the
 * controller fills, and the commands and control transfers that wait for
 * their events, each for a bounded time. */
#include "usb.h"
#include <formica/user.h>
#include <stdio.h>

#define COMMAND_WAIT_MS 1000
#define CONTROL_WAIT_MS 1000
#define BUSY_POLLS 200 /* before each wait sleeps between looks */

static void barrier(void)
{
    __asm__ volatile("mfence" ::: "memory");
}

void ring_init(struct trb_ring *ring, volatile void *page, uint64_t physical)
{
    ring->trbs = page;
    ring->physical = physical;
    ring->index = 0;
    ring->cycle = 1;
    volatile struct xhci_trb *link = &ring->trbs[USB_RING_TRBS - 1];
    link->parameter = physical;
    link->status = 0;
    link->control = XHCI_TRB_TYPE(XHCI_TRB_LINK) | XHCI_TRB_TOGGLE_CYCLE; /* cycle 0: not yet */
}

void ring_put(struct trb_ring *ring, uint64_t parameter, uint32_t status, uint32_t control)
{
    volatile struct xhci_trb *trb = &ring->trbs[ring->index];
    trb->parameter = parameter;
    trb->status = status;
    barrier();
    trb->control = (control & ~XHCI_TRB_CYCLE) | ring->cycle;
    if (++ring->index == USB_RING_TRBS - 1) { /* hand the link over, then wrap */
        volatile struct xhci_trb *link = &ring->trbs[USB_RING_TRBS - 1];
        link->control = XHCI_TRB_TYPE(XHCI_TRB_LINK) | XHCI_TRB_TOGGLE_CYCLE | ring->cycle;
        ring->index = 0;
        ring->cycle ^= 1;
    }
}

void xhci_ring_doorbell(struct usb_driver *driver, uint32_t slot, uint32_t target)
{
    barrier();
    driver->doorbells[slot] = target;
}

static void transfer_event(struct usb_driver *driver, const volatile struct xhci_trb *event)
{
    struct usb_device *device = usb_device_of_slot(driver, XHCI_TRB_SLOT_OF(event->control));
    if (device == NULL)
        return;
    uint32_t endpoint = XHCI_TRB_ENDPOINT_OF(event->control);
    uint32_t completion = XHCI_TRB_COMPLETION_OF(event->status);
    if (endpoint == 1) {
        device->control_done = true;
        device->control_completion = completion;
        return;
    }
    if (!device->keyboard || endpoint != device->keyboard_endpoint)
        return;
    if (completion == XHCI_COMPLETION_SUCCESS || completion == XHCI_COMPLETION_SHORT_PACKET) {
        driver->reports++;
        driver->bytes_typed += hid_keyboard_report(&device->hid, device->buffer + USB_REPORT_OFFSET,
                                                   clock_microseconds());
        usb_queue_report(driver, device);
    } else {
        printf("usb: keyboard on port %u: report transfer failed (completion code %u); "
               "it is no longer read\n",
               device->port, completion);
        device->keyboard = false;
    }
}

void xhci_take_events(struct usb_driver *driver)
{
    bool took = false;
    for (;;) {
        volatile struct xhci_trb *event = &driver->events[driver->event_index];
        if ((event->control & XHCI_TRB_CYCLE) != driver->event_cycle)
            break;
        barrier();
        switch (XHCI_TRB_TYPE_OF(event->control)) {
        case XHCI_TRB_COMMAND_COMPLETION:
            driver->command_done = true;
            driver->command_completion = XHCI_TRB_COMPLETION_OF(event->status);
            driver->command_slot = XHCI_TRB_SLOT_OF(event->control);
            break;
        case XHCI_TRB_TRANSFER_EVENT:
            transfer_event(driver, event);
            break;
        case XHCI_TRB_PORT_STATUS_CHANGE:
            driver->ports_changed = true;
            break;
        default:
            break;
        }
        took = true;
        if (++driver->event_index == USB_RING_TRBS) {
            driver->event_index = 0;
            driver->event_cycle ^= 1;
        }
    }
    if (took)
        xhci_write64(driver->runtime, XHCI_ERDP,
                     (driver->events_physical + driver->event_index * sizeof(struct xhci_trb)) |
                         XHCI_ERDP_BUSY);
}

/* Takes events until *done is set or `milliseconds` pass. */
static bool wait_for(struct usb_driver *driver, volatile bool *done, uint64_t milliseconds)
{
    uint64_t deadline = clock_microseconds() + milliseconds * 1000;
    for (int polls = 0;; polls++) {
        xhci_take_events(driver);
        if (*done)
            return true;
        if (clock_microseconds() > deadline)
            return false;
        if (polls >= BUSY_POLLS)
            sleep_ms(1);
    }
}

uint32_t xhci_command(struct usb_driver *driver, uint64_t parameter, uint32_t control)
{
    driver->command_done = false;
    ring_put(&driver->commands, parameter, 0, control);
    xhci_ring_doorbell(driver, 0, 0);
    if (!wait_for(driver, &driver->command_done, COMMAND_WAIT_MS)) {
        printf("usb: command (TRB type %u) not completed within %u ms\n", XHCI_TRB_TYPE_OF(control),
               COMMAND_WAIT_MS);
        return 0;
    }
    return driver->command_completion;
}

uint32_t usb_control(struct usb_driver *driver, struct usb_device *device, uint8_t type,
                     uint8_t request, uint16_t value, uint16_t index, uint16_t length)
{
    bool in = (type & USB_TYPE_DEVICE_IN) != 0;
    uint64_t setup = type | (uint64_t)request << 8 | (uint64_t)value << 16 | (uint64_t)index << 32 |
                     (uint64_t)length << 48;
    uint32_t setup_control = XHCI_TRB_TYPE(XHCI_TRB_SETUP) | XHCI_TRB_IMMEDIATE;
    if (length > 0 && in)
        setup_control |= XHCI_TRB_SETUP_IN_DATA;
    device->control_done = false;
    ring_put(&device->control, setup, 8, setup_control);
    if (length > 0)
        ring_put(&device->control, device->buffer_physical, length,
                 XHCI_TRB_TYPE(XHCI_TRB_DATA) | (in ? XHCI_TRB_DIRECTION_IN : 0));
    bool status_in = length == 0 || !in;
    ring_put(&device->control, 0, 0,
             XHCI_TRB_TYPE(XHCI_TRB_STATUS) | XHCI_TRB_IOC |
                 (status_in ? XHCI_TRB_DIRECTION_IN : 0));
    xhci_ring_doorbell(driver, device->slot, 1);
    if (!wait_for(driver, &device->control_done, CONTROL_WAIT_MS)) {
        printf("usb: port %u: control request %u not answered within %u ms\n", device->port,
               request, CONTROL_WAIT_MS);
        return 0;
    }
    return device->control_completion;
}
