/* servers/usb/main.c: USB, the USB host driver (program "usb", spawned with
 * SPAWN_DRIVER; protocol/usb.messages). It starts the first xHCI controller
 * PCI finds, sets up the keyboards on its root ports and then waits for
 * the controller's interrupt (or polls without one), a request (USB_STATUS)
 * or a held key's next repeat. Without a controller it answers every request
 * with -E_NOT_FOUND. */
#include "usb.h"
#include <formica/errors.h>
#include <formica/ica.h>
#include <formica/protocol/usb_dispatch.h>
#include <formica/request.h>
#include <formica/server_placeholder.h>
#include <formica/user.h>
#include <stdint.h>
#include <stdio.h>

#define POLL_MS 10 /* without an interrupt, the event ring is looked at this often */

static struct usb_driver driver;

long usb_status(struct usb_driver *usb, uint64_t control, struct usb_status_message *message)
{
    (void)control;
    message->ports = usb->ports;
    message->devices = usb->device_count;
    message->keyboards = usb->keyboard_count;
    message->interrupt = (uint32_t)usb->interrupt;
    message->reports = usb->reports;
    message->bytes_typed = usb->bytes_typed;
    return 0;
}

static void answer(uint64_t control)
{
    ica_control_of(control)->result = usb_dispatch(&driver, control);
    long error = ica_return(control);
    if (error != 0)
        printf("usb: return failed: %s\n", error_text(error));
}

/* Milliseconds until the next repeat of a held key, or 0 for none due. */
static uint64_t next_repeat_ms(void)
{
    uint64_t now = clock_microseconds(), soonest = UINT64_MAX;
    for (uint32_t i = 0; i < USB_MAX_DEVICES; i++) {
        struct usb_device *device = &driver.devices[i];
        if (device->used && device->keyboard) {
            uint64_t due = hid_keyboard_next_repeat(&device->hid, now);
            soonest = due < soonest ? due : soonest;
        }
    }
    return soonest == UINT64_MAX ? 0 : soonest / 1000 + 1;
}

static void repeat_held_keys(void)
{
    uint64_t now = clock_microseconds();
    for (uint32_t i = 0; i < USB_MAX_DEVICES; i++) {
        struct usb_device *device = &driver.devices[i];
        if (device->used && device->keyboard)
            driver.bytes_typed += hid_keyboard_repeat(&device->hid, now);
    }
}

/* The next request, or an error once the interrupt, the timeout or nothing came. */
static long wait_for_work(void)
{
    uint64_t repeat_ms = next_repeat_ms();
    if (driver.interrupt == PCI_INTERRUPT_NONE)
        return ica_receive_within(0, repeat_ms != 0 && repeat_ms < POLL_MS ? repeat_ms : POLL_MS);
    if (repeat_ms != 0)
        return ica_receive_within(ICA_OR_IRQ, repeat_ms);
    return ica_receive(ICA_OR_IRQ);
}

static _Noreturn void serve(void)
{
    long error = server_register(SERVER_NAME_USB);
    if (error != 0)
        printf("usb: cannot take the name 'usb' (%s); driving the keyboards anyway\n",
               error_text(error));
    for (;;) {
        xhci_acknowledge_interrupt(&driver);
        xhci_take_events(&driver);
        if (driver.ports_changed)
            usb_scan_ports(&driver);
        repeat_held_keys();
        long control = wait_for_work();
        if (control >= 0)
            answer((uint64_t)control);
    }
}

int main(void)
{
    if (!xhci_find(&driver)) {
        printf("usb: no xHCI controller\n");
        run_server_placeholder(SERVER_NAME_USB, -E_NOT_FOUND);
    }
    if (!xhci_start(&driver))
        run_server_placeholder(SERVER_NAME_USB, -E_IO);
    usb_scan_ports(&driver);
    if (driver.keyboard_count == 0)
        printf("usb: no keyboard on the xHCI's ports (yet)\n");
    serve();
}
