/* usb_device.c: a device on a root port, from connection to keyboard: the
 * port is reset (USB 2; a USB 3 port enables itself), a slot enabled and
 * the device addressed, its descriptors read; a HID boot keyboard is then
 * configured, its interrupt IN endpoint added, and it is switched to the
 * boot protocol, whose 8-byte reports need no report descriptor. */
#include "usb.h"
#include <formica/device.h>
#include <formica/syscalls.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define PORT_RESET_WAIT_MS 500
#define PORT_POWER_WAIT_MS 20
#define DEVICE_DESCRIPTOR_BYTES 18
#define CONFIGURATION_HEADER_BYTES 9
#define CONFIGURATION_MAX_BYTES 2048

struct keyboard_interface {
    uint8_t configuration, interface, endpoint, interval;
    uint16_t max_packet;
};

struct usb_device *usb_device_of_slot(struct usb_driver *driver, uint32_t slot)
{
    for (uint32_t i = 0; i < USB_MAX_DEVICES; i++)
        if (driver->devices[i].used && driver->devices[i].slot == slot)
            return &driver->devices[i];
    return NULL;
}

static bool port_addressed(struct usb_driver *driver, uint32_t port)
{
    for (uint32_t i = 0; i < USB_MAX_DEVICES; i++)
        if (driver->devices[i].used && driver->devices[i].port == port)
            return true;
    return false;
}

static const char *speed_name(uint32_t speed)
{
    switch (speed) {
    case XHCI_SPEED_LOW:
        return "low";
    case XHCI_SPEED_FULL:
        return "full";
    case XHCI_SPEED_HIGH:
        return "high";
    default:
        return "super";
    }
}

/* PORTSC as written back without changing anything: no change bit cleared,
 * the enable bit (written 1: disable) and the reset left alone. */
static uint32_t port_neutral(uint32_t value)
{
    return value & ~(XHCI_PORTSC_ENABLED | XHCI_PORTSC_CHANGES | XHCI_PORTSC_RESET);
}

/* A USB 2 port is reset to enable it; a USB 3 port has enabled itself. */
static bool enable_port(struct usb_driver *driver, uint32_t port)
{
    volatile uint8_t *op = driver->operational;
    uint32_t value = xhci_read(op, XHCI_PORTSC(port));
    if (!(value & XHCI_PORTSC_POWER)) {
        xhci_write(op, XHCI_PORTSC(port), port_neutral(value) | XHCI_PORTSC_POWER);
        sleep_ms(PORT_POWER_WAIT_MS);
        value = xhci_read(op, XHCI_PORTSC(port));
    }
    if (XHCI_PORTSC_SPEED(value) != XHCI_SPEED_SUPER) {
        xhci_write(op, XHCI_PORTSC(port), port_neutral(value) | XHCI_PORTSC_RESET);
        uint64_t deadline = clock_microseconds() + PORT_RESET_WAIT_MS * 1000;
        while (!(xhci_read(op, XHCI_PORTSC(port)) & XHCI_PORTSC_RESET_CHANGE)) {
            if (clock_microseconds() > deadline) {
                printf("usb: port %u: no end of reset within %u ms\n", port, PORT_RESET_WAIT_MS);
                return false;
            }
            sleep_ms(1);
        }
        value = xhci_read(op, XHCI_PORTSC(port));
    }
    xhci_write(op, XHCI_PORTSC(port), port_neutral(value) | (value & XHCI_PORTSC_CHANGES));
    return (xhci_read(op, XHCI_PORTSC(port)) & XHCI_PORTSC_ENABLED) != 0;
}

static volatile uint32_t *context_at(struct usb_driver *driver, volatile uint8_t *base,
                                     uint32_t index)
{
    return (volatile uint32_t *)(base + index * driver->context_bytes);
}

/* The input context: control context (index 0) adds `add`, then the slot
 * context (1) and the endpoint contexts (1 + device context index). */
static void input_begin(struct usb_driver *driver, uint32_t add)
{
    memset((void *)driver->input, 0, USB_PAGE);
    context_at(driver, driver->input, 0)[1] = add;
}

static void input_slot(struct usb_driver *driver, struct usb_device *device, uint32_t entries)
{
    volatile uint32_t *slot = context_at(driver, driver->input, 1);
    slot[XHCI_SLOT_ROUTE_SPEED_ENTRIES] = device->speed << 20 | entries << 27;
    slot[XHCI_SLOT_PORT] = device->port << 16;
}

static void input_endpoint(struct usb_driver *driver, uint32_t index, uint32_t type,
                           uint32_t max_packet, uint32_t interval, const struct trb_ring *ring)
{
    volatile uint32_t *endpoint = context_at(driver, driver->input, 1 + index);
    endpoint[XHCI_ENDPOINT_INTERVAL] = interval << 16;
    endpoint[XHCI_ENDPOINT_TYPE_SIZE] = XHCI_ENDPOINT_ERRORS << 1 | type << 3 | max_packet << 16;
    endpoint[XHCI_ENDPOINT_DEQUEUE_LOW] = (uint32_t)ring->physical | ring->cycle;
    endpoint[XHCI_ENDPOINT_DEQUEUE_HIGH] = (uint32_t)(ring->physical >> 32);
    uint32_t payload = type == XHCI_ENDPOINT_INTERRUPT_IN ? max_packet : 0;
    endpoint[XHCI_ENDPOINT_AVERAGE] = 8 | payload << 16;
}

static uint32_t initial_max_packet(uint32_t speed)
{
    return speed == XHCI_SPEED_SUPER ? 512 : speed == XHCI_SPEED_HIGH ? 64 : 8;
}

static struct usb_device *new_device(struct usb_driver *driver, uint32_t port, uint32_t slot,
                                     uint32_t speed)
{
    for (uint32_t i = 0; i < USB_MAX_DEVICES; i++) {
        struct usb_device *device = &driver->devices[i];
        if (device->used)
            continue;
        memset(device, 0, sizeof(*device));
        uint64_t ring_physical;
        volatile void *ring = xhci_dma_page(&ring_physical);
        device->context = xhci_dma_page(&device->context_physical);
        device->buffer = xhci_dma_page(&device->buffer_physical);
        if (ring == NULL || device->context == NULL || device->buffer == NULL)
            return NULL;
        ring_init(&device->control, ring, ring_physical);
        device->used = true;
        device->port = port;
        device->slot = slot;
        device->speed = speed;
        device->max_packet0 = initial_max_packet(speed);
        driver->device_contexts[slot] = device->context_physical;
        return device;
    }
    return NULL;
}

static struct usb_device *address_device(struct usb_driver *driver, uint32_t port)
{
    uint32_t speed = XHCI_PORTSC_SPEED(xhci_read(driver->operational, XHCI_PORTSC(port)));
    if (xhci_command(driver, 0, XHCI_TRB_TYPE(XHCI_TRB_ENABLE_SLOT)) != XHCI_COMPLETION_SUCCESS) {
        printf("usb: port %u: no device slot\n", port);
        return NULL;
    }
    struct usb_device *device = new_device(driver, port, driver->command_slot, speed);
    if (device == NULL) {
        printf("usb: port %u: no room for another device (at most %u)\n", port, USB_MAX_DEVICES);
        return NULL;
    }
    input_begin(driver, 1u << 0 | 1u << 1);
    input_slot(driver, device, 1);
    input_endpoint(driver, 1, XHCI_ENDPOINT_CONTROL, device->max_packet0, 0, &device->control);
    uint32_t code =
        xhci_command(driver, driver->input_physical,
                     XHCI_TRB_TYPE(XHCI_TRB_ADDRESS_DEVICE) | XHCI_TRB_SLOT(device->slot));
    if (code != XHCI_COMPLETION_SUCCESS) {
        printf("usb: port %u: address device failed (completion code %u)\n", port, code);
        device->used = false;
        return NULL;
    }
    driver->device_count++;
    return device;
}

static bool get_descriptor(struct usb_driver *driver, struct usb_device *device, uint8_t type,
                           uint16_t length)
{
    uint32_t code = usb_control(driver, device, USB_TYPE_DEVICE_IN, USB_REQUEST_GET_DESCRIPTOR,
                                (uint16_t)(type << 8), 0, length);
    return code == XHCI_COMPLETION_SUCCESS || code == XHCI_COMPLETION_SHORT_PACKET;
}

/* A full-speed device's endpoint 0 may take more than 8 bytes a packet. */
static bool learn_max_packet(struct usb_driver *driver, struct usb_device *device)
{
    if (!get_descriptor(driver, device, USB_DESCRIPTOR_DEVICE, 8))
        return false;
    uint32_t size = device->buffer[7];
    if (device->speed == XHCI_SPEED_SUPER)
        size = 1u << size;
    if (size == device->max_packet0 || size == 0)
        return true;
    device->max_packet0 = size;
    input_begin(driver, 1u << 1);
    input_endpoint(driver, 1, XHCI_ENDPOINT_CONTROL, size, 0, &device->control);
    return xhci_command(driver, driver->input_physical,
                        XHCI_TRB_TYPE(XHCI_TRB_EVALUATE_CONTEXT) | XHCI_TRB_SLOT(device->slot)) ==
           XHCI_COMPLETION_SUCCESS;
}

/* The first HID boot keyboard interface of the configuration, with its
 * interrupt IN endpoint; false when the device has none. */
static bool find_keyboard(const volatile uint8_t *data, uint32_t length,
                          struct keyboard_interface *found)
{
    bool in_keyboard = false;
    found->configuration = data[5];
    for (uint32_t at = 0; at + 2 <= length && data[at] >= 2; at += data[at]) {
        const volatile uint8_t *descriptor = data + at;
        if (at + descriptor[0] > length)
            break;
        if (descriptor[1] == USB_DESCRIPTOR_INTERFACE && descriptor[0] >= 9) {
            in_keyboard = descriptor[5] == USB_CLASS_HID &&
                          descriptor[6] == USB_HID_SUBCLASS_BOOT &&
                          descriptor[7] == USB_HID_PROTOCOL_KEYBOARD;
            found->interface = descriptor[2];
        } else if (in_keyboard && descriptor[1] == USB_DESCRIPTOR_ENDPOINT && descriptor[0] >= 7 &&
                   (descriptor[2] & USB_ENDPOINT_IN) &&
                   (descriptor[3] & 3) == USB_ENDPOINT_INTERRUPT) {
            found->endpoint = descriptor[2] & 0x0f;
            found->max_packet = (uint16_t)((descriptor[4] | descriptor[5] << 8) & 0x7ff);
            found->interval = descriptor[6];
            return true;
        }
    }
    return false;
}

/* xHCI's interval: 2^n x 125 us. Full and low speed give frames (1 ms),
 * high and super speed 2^(bInterval - 1) microframes already. */
static uint32_t xhci_interval(uint32_t speed, uint8_t interval)
{
    if (speed == XHCI_SPEED_HIGH || speed == XHCI_SPEED_SUPER)
        return interval > 0 ? interval - 1u : 0;
    uint32_t exponent = 3;
    while (exponent < 10 && (1u << (exponent + 1)) <= interval * 8u)
        exponent++;
    return exponent;
}

void usb_queue_report(struct usb_driver *driver, struct usb_device *device)
{
    ring_put(&device->interrupt, device->buffer_physical + USB_REPORT_OFFSET, device->report_bytes,
             XHCI_TRB_TYPE(XHCI_TRB_NORMAL) | XHCI_TRB_IOC | XHCI_TRB_SHORT_OK);
    xhci_ring_doorbell(driver, device->slot, device->keyboard_endpoint);
}

static bool start_keyboard(struct usb_driver *driver, struct usb_device *device,
                           const struct keyboard_interface *keyboard)
{
    uint64_t ring_physical;
    volatile void *ring = xhci_dma_page(&ring_physical);
    if (ring == NULL)
        return false;
    ring_init(&device->interrupt, ring, ring_physical);
    if (usb_control(driver, device, USB_TYPE_DEVICE_OUT, USB_REQUEST_SET_CONFIGURATION,
                    keyboard->configuration, 0, 0) != XHCI_COMPLETION_SUCCESS)
        return false;
    uint32_t index = keyboard->endpoint * 2u + 1u; /* IN endpoints have the odd indexes */
    input_begin(driver, 1u << 0 | 1u << index);
    input_slot(driver, device, index);
    input_endpoint(driver, index, XHCI_ENDPOINT_INTERRUPT_IN, keyboard->max_packet,
                   xhci_interval(device->speed, keyboard->interval), &device->interrupt);
    uint32_t code =
        xhci_command(driver, driver->input_physical,
                     XHCI_TRB_TYPE(XHCI_TRB_CONFIGURE_ENDPOINT) | XHCI_TRB_SLOT(device->slot));
    if (code != XHCI_COMPLETION_SUCCESS) {
        printf("usb: port %u: configure endpoint failed (completion code %u)\n", device->port,
               code);
        return false;
    }
    if (usb_control(driver, device, USB_TYPE_CLASS_INTERFACE_OUT, USB_REQUEST_HID_SET_PROTOCOL,
                    USB_HID_BOOT_PROTOCOL, keyboard->interface, 0) != XHCI_COMPLETION_SUCCESS)
        return false;
    /* Reports only on a change; a keyboard that refuses (stalls) it still works. */
    usb_control(driver, device, USB_TYPE_CLASS_INTERFACE_OUT, USB_REQUEST_HID_SET_IDLE, 0,
                keyboard->interface, 0);
    device->keyboard = true;
    device->keyboard_endpoint = index;
    device->report_bytes =
        keyboard->max_packet < HID_BOOT_REPORT_BYTES ? keyboard->max_packet : HID_BOOT_REPORT_BYTES;
    usb_queue_report(driver, device);
    return true;
}

static void enumerate(struct usb_driver *driver, uint32_t port)
{
    if (!enable_port(driver, port))
        return;
    struct usb_device *device = address_device(driver, port);
    if (device == NULL)
        return;
    if (!learn_max_packet(driver, device) ||
        !get_descriptor(driver, device, USB_DESCRIPTOR_DEVICE, DEVICE_DESCRIPTOR_BYTES)) {
        printf("usb: port %u: the device's descriptor cannot be read\n", port);
        return;
    }
    uint16_t vendor = (uint16_t)(device->buffer[8] | device->buffer[9] << 8);
    uint16_t product = (uint16_t)(device->buffer[10] | device->buffer[11] << 8);
    if (!get_descriptor(driver, device, USB_DESCRIPTOR_CONFIGURATION, CONFIGURATION_HEADER_BYTES)) {
        printf("usb: port %u: device %04x:%04x: no configuration descriptor\n", port, vendor,
               product);
        return;
    }
    uint32_t total = device->buffer[2] | device->buffer[3] << 8;
    if (total > CONFIGURATION_MAX_BYTES)
        total = CONFIGURATION_MAX_BYTES;
    struct keyboard_interface keyboard = {0};
    if (!get_descriptor(driver, device, USB_DESCRIPTOR_CONFIGURATION, (uint16_t)total) ||
        !find_keyboard(device->buffer, total, &keyboard)) {
        printf("usb: port %u: device %04x:%04x (%s speed) is not a keyboard; left alone\n", port,
               vendor, product, speed_name(device->speed));
        return;
    }
    if (!start_keyboard(driver, device, &keyboard)) {
        printf("usb: port %u: keyboard %04x:%04x could not be set up\n", port, vendor, product);
        return;
    }
    driver->keyboard_count++;
    keyboard_ready(CONSOLE_KEYBOARD_USB);
    printf("usb: port %u: keyboard %04x:%04x (%s speed), boot protocol, US layout\n", port, vendor,
           product, speed_name(device->speed));
}

/* A device unplugged: its record goes (its slot stays enabled, unused). */
static void forget_port(struct usb_driver *driver, uint32_t port)
{
    for (uint32_t i = 0; i < USB_MAX_DEVICES; i++) {
        struct usb_device *device = &driver->devices[i];
        if (!device->used || device->port != port)
            continue;
        printf("usb: port %u: %s unplugged\n", port, device->keyboard ? "keyboard" : "device");
        if (device->keyboard)
            driver->keyboard_count--;
        device->used = false;
        device->keyboard = false;
    }
}

void usb_scan_ports(struct usb_driver *driver)
{
    driver->ports_changed = false;
    for (uint32_t port = 1; port <= driver->ports; port++) {
        uint32_t value = xhci_read(driver->operational, XHCI_PORTSC(port));
        bool connected = (value & XHCI_PORTSC_CONNECTED) != 0;
        if (!connected && port_addressed(driver, port))
            forget_port(driver, port);
        if (connected && !port_addressed(driver, port))
            enumerate(driver, port);
    }
}
