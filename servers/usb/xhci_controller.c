/* xhci_controller.c: finding and starting the xHCI controller. The
 * firmware is asked to let go (USB legacy support hand-off, which stops its
 * SMIs that fake a PS/2 keyboard), the controller is halted and reset, its
 * memory laid out (the slots' context table with scratchpad buffers, the
 * command ring, one event ring for interrupter 0) and it is started with
 * its interrupt (MSI-X, MSI or INTx; polled without one). Every wait is bounded. */
#include "usb.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/syscalls.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define PCI_CLASS_SERIAL_BUS 0x0c
#define PCI_SUBCLASS_USB 0x03
#define PCI_INTERFACE_XHCI 0x30
#define CAPABILITY_MAP_BYTES 0x1000
#define HALT_WAIT_MS 100
#define RESET_WAIT_MS 1000
#define HANDOFF_WAIT_MS 1000
#define MAX_SCRATCHPADS 256 /* one page of pointers */
#define DMA_POOL_PAGES 64

uint32_t xhci_read(volatile uint8_t *base, uint32_t offset)
{
    return *(volatile uint32_t *)(base + offset);
}

void xhci_write(volatile uint8_t *base, uint32_t offset, uint32_t value)
{
    *(volatile uint32_t *)(base + offset) = value;
}

/* 64-bit registers as two dwords, the low one first (xHCI 5.1). */
void xhci_write64(volatile uint8_t *base, uint32_t offset, uint64_t value)
{
    xhci_write(base, offset, (uint32_t)value);
    xhci_write(base, offset + 4, (uint32_t)(value >> 32));
}

static struct dma_region pool;
static uint64_t pool_used;

volatile void *xhci_dma_page(uint64_t *physical)
{
    if (pool.bytes == 0 && dma_allocate(DMA_POOL_PAGES * USB_PAGE, &pool) != 0)
        return NULL;
    if (pool_used + USB_PAGE > pool.bytes)
        return NULL;
    *physical = pool.physical + pool_used;
    volatile void *page = (volatile void *)(pool.address + pool_used);
    pool_used += USB_PAGE;
    return page; /* dma_allocate's memory comes zeroed */
}

/* Waits until (register & mask) == want; false after `milliseconds`. */
static bool wait_register(volatile uint8_t *base, uint32_t offset, uint32_t mask, uint32_t want,
                          uint64_t milliseconds)
{
    uint64_t deadline = clock_microseconds() + milliseconds * 1000;
    while ((xhci_read(base, offset) & mask) != want) {
        if (clock_microseconds() > deadline)
            return false;
        sleep_ms(1);
    }
    return true;
}

bool xhci_find(struct usb_driver *driver)
{
    memset(driver, 0, sizeof(*driver));
    return pci_find_class(PCI_CLASS_SERIAL_BUS, PCI_SUBCLASS_USB, PCI_INTERFACE_XHCI, 0,
                          &driver->function);
}

static bool map_registers(struct usb_driver *driver)
{
    bool is_io = true;
    uint64_t bar = pci_bar(&driver->function, 0, &is_io);
    if (is_io || bar == 0) {
        printf("usb: xHCI BAR 0 is not a memory BAR\n");
        return false;
    }
    long capability = device_map(bar, CAPABILITY_MAP_BYTES);
    if (capability < 0) {
        printf("usb: cannot map the xHCI registers: %s\n", error_text(capability));
        return false;
    }
    volatile uint8_t *base = (volatile uint8_t *)capability;
    uint32_t caplength = xhci_read(base, XHCI_CAPLENGTH) & 0xff;
    uint32_t parameters = xhci_read(base, XHCI_HCSPARAMS1);
    driver->max_slots = parameters & 0xff;
    driver->ports = parameters >> 24;
    uint32_t doorbells = xhci_read(base, XHCI_DBOFF) & ~3u;
    uint32_t runtime = xhci_read(base, XHCI_RTSOFF) & ~0x1fu;
    uint64_t span = caplength + XHCI_PORTSC(driver->ports + 1);
    if (runtime + XHCI_ERDP + 8 > span)
        span = runtime + XHCI_ERDP + 8;
    if (doorbells + 4 * (driver->max_slots + 1) > span)
        span = doorbells + 4 * (driver->max_slots + 1);
    long all = device_map(bar, span);
    if (all < 0) {
        printf("usb: cannot map %lu bytes of xHCI registers: %s\n", span, error_text(all));
        return false;
    }
    driver->capability = (volatile uint8_t *)all;
    driver->operational = driver->capability + caplength;
    driver->runtime = driver->capability + runtime;
    driver->doorbells = (volatile uint32_t *)(driver->capability + doorbells);
    uint32_t capabilities = xhci_read(driver->capability, XHCI_HCCPARAMS1);
    driver->context_bytes = capabilities & XHCI_HCCPARAMS1_CSZ ? 64 : 32;
    uint32_t parameters2 = xhci_read(driver->capability, XHCI_HCSPARAMS2);
    driver->scratchpads = ((parameters2 >> 21) & 0x1f) << 5 | parameters2 >> 27;
    return true;
}

/* The firmware's hand-off (xHCI 4.22.1): OS owned, then wait for the BIOS
 * to drop its semaphore, and no more SMIs either way. */
static void take_from_firmware(struct usb_driver *driver)
{
    uint32_t offset = (xhci_read(driver->capability, XHCI_HCCPARAMS1) >> 16) * 4;
    while (offset != 0 && offset < CAPABILITY_MAP_BYTES) {
        uint32_t header = xhci_read(driver->capability, offset);
        if ((header & 0xff) == XHCI_EXTENDED_LEGACY) {
            xhci_write(driver->capability, offset, header | XHCI_LEGACY_OS_OWNED);
            if (!wait_register(driver->capability, offset, XHCI_LEGACY_BIOS_OWNED, 0,
                               HANDOFF_WAIT_MS))
                printf("usb: the firmware did not let go of the xHCI within %u ms; "
                       "taking it anyway\n",
                       HANDOFF_WAIT_MS);
            uint32_t control = xhci_read(driver->capability, offset + XHCI_LEGACY_CONTROL);
            xhci_write(driver->capability, offset + XHCI_LEGACY_CONTROL,
                       (control & ~XHCI_LEGACY_SMI_ENABLES) | XHCI_LEGACY_SMI_STATUS);
            return;
        }
        uint32_t next = (header >> 8) & 0xff;
        offset = next != 0 ? offset + next * 4 : 0;
    }
}

static bool halt_and_reset(struct usb_driver *driver)
{
    volatile uint8_t *op = driver->operational;
    xhci_write(op, XHCI_USBCMD, xhci_read(op, XHCI_USBCMD) & ~XHCI_USBCMD_RUN);
    if (!wait_register(op, XHCI_USBSTS, XHCI_USBSTS_HALTED, XHCI_USBSTS_HALTED, HALT_WAIT_MS)) {
        printf("usb: the xHCI does not halt\n");
        return false;
    }
    xhci_write(op, XHCI_USBCMD, XHCI_USBCMD_RESET);
    if (!wait_register(op, XHCI_USBCMD, XHCI_USBCMD_RESET, 0, RESET_WAIT_MS) ||
        !wait_register(op, XHCI_USBSTS, XHCI_USBSTS_NOT_READY, 0, RESET_WAIT_MS)) {
        printf("usb: the xHCI does not come out of reset\n");
        return false;
    }
    return true;
}

/* Scratchpad buffers the controller asks for (entry 0 of the context table). */
static bool give_scratchpads(struct usb_driver *driver)
{
    if (driver->scratchpads == 0)
        return true;
    if (driver->scratchpads > MAX_SCRATCHPADS) {
        printf("usb: the xHCI wants %u scratchpad pages, more than %u\n", driver->scratchpads,
               MAX_SCRATCHPADS);
        return false;
    }
    struct dma_region buffers;
    uint64_t array_physical;
    volatile uint64_t *array = xhci_dma_page(&array_physical);
    if (array == NULL || dma_allocate(driver->scratchpads * USB_PAGE, &buffers) != 0)
        return false;
    for (uint32_t i = 0; i < driver->scratchpads; i++)
        array[i] = buffers.physical + i * USB_PAGE;
    driver->device_contexts[0] = array_physical;
    return true;
}

static bool lay_out_memory(struct usb_driver *driver)
{
    uint64_t physical;
    volatile uint8_t *page = xhci_dma_page(&physical); /* contexts table, then the ERST */
    if (page == NULL)
        return false;
    driver->device_contexts = (volatile uint64_t *)page;
    driver->device_contexts_physical = physical;
    volatile uint64_t *segment_table = (volatile uint64_t *)(page + 2048);
    uint64_t segment_table_physical = physical + 2048;
    if (!give_scratchpads(driver))
        return false;
    volatile void *commands = xhci_dma_page(&physical);
    if (commands == NULL)
        return false;
    ring_init(&driver->commands, commands, physical);
    driver->events = xhci_dma_page(&driver->events_physical);
    driver->input = xhci_dma_page(&driver->input_physical);
    if (driver->events == NULL || driver->input == NULL)
        return false;
    driver->event_cycle = 1;
    segment_table[0] = driver->events_physical;
    segment_table[1] = USB_RING_TRBS;
    volatile uint8_t *op = driver->operational, *interrupter = driver->runtime;
    uint32_t slots = driver->max_slots < USB_MAX_DEVICES ? driver->max_slots : USB_MAX_DEVICES;
    xhci_write(op, XHCI_CONFIG, slots);
    xhci_write64(op, XHCI_DCBAAP, driver->device_contexts_physical);
    xhci_write64(op, XHCI_CRCR, driver->commands.physical | driver->commands.cycle);
    xhci_write(interrupter, XHCI_ERSTSZ, 1);
    xhci_write64(interrupter, XHCI_ERDP, driver->events_physical);
    xhci_write64(interrupter, XHCI_ERSTBA, segment_table_physical);
    return true;
}

void xhci_acknowledge_interrupt(struct usb_driver *driver)
{
    xhci_write(driver->operational, XHCI_USBSTS, XHCI_USBSTS_EVENT_INTERRUPT);
    xhci_write(driver->runtime, XHCI_IMAN, XHCI_IMAN_ENABLE | XHCI_IMAN_PENDING);
}

bool xhci_start(struct usb_driver *driver)
{
    pci_enable(&driver->function);
    if (!map_registers(driver))
        return false;
    take_from_firmware(driver);
    if (!halt_and_reset(driver))
        return false;
    if (!lay_out_memory(driver)) {
        printf("usb: no DMA memory for the xHCI's rings and contexts\n");
        return false;
    }
    driver->interrupt = pci_interrupt_attach(&driver->function, "usb");
    xhci_acknowledge_interrupt(driver);
    xhci_write(driver->operational, XHCI_USBCMD, XHCI_USBCMD_RUN | XHCI_USBCMD_INTERRUPTS);
    if (!wait_register(driver->operational, XHCI_USBSTS, XHCI_USBSTS_HALTED, 0, HALT_WAIT_MS)) {
        printf("usb: the xHCI does not start\n");
        return false;
    }
    printf("usb: xHCI %02x:%02x.%u (%04x:%04x), %u ports, %u slots, %u-byte contexts, "
           "interrupt %s\n",
           driver->function.bus, driver->function.device, driver->function.function,
           driver->function.vendor_id, driver->function.device_id, driver->ports, driver->max_slots,
           driver->context_bytes, pci_interrupt_name(driver->interrupt));
    return true;
}
