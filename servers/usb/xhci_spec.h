/* xhci_spec.h: the xHCI registers, TRBs and contexts this driver uses, as
 * Intel's eXtensible Host Controller Interface specification (rev. 1.2)
 * names them: capability, operational, runtime and doorbell registers,
 * the TRB types and fields, slot and endpoint context fields, and the USB
 * 2.0 requests and descriptors of enumeration and the HID boot protocol. */
#pragma once
#include <stdint.h>

/* Capability registers (from BAR 0). */
#define XHCI_CAPLENGTH 0x00  /* u8: where the operational registers start */
#define XHCI_HCSPARAMS1 0x04 /* max slots (7:0), max interrupters (18:8), max ports (31:24) */
#define XHCI_HCSPARAMS2 0x08 /* max scratchpad buffers: high (25:21), low (31:27) */
#define XHCI_HCCPARAMS1 0x10 /* 64-byte contexts (bit 2), extended capabilities (31:16, dwords) */
#define XHCI_DBOFF 0x14
#define XHCI_RTSOFF 0x18
#define XHCI_HCCPARAMS1_CSZ (1u << 2)

/* Operational registers (from CAPLENGTH). */
#define XHCI_USBCMD 0x00
#define XHCI_USBSTS 0x04
#define XHCI_CRCR 0x18
#define XHCI_DCBAAP 0x30
#define XHCI_CONFIG 0x38
#define XHCI_PORTSC(port) (0x400 + 0x10 * ((port)-1)) /* ports are numbered from 1 */
#define XHCI_USBCMD_RUN (1u << 0)
#define XHCI_USBCMD_RESET (1u << 1)
#define XHCI_USBCMD_INTERRUPTS (1u << 2)
#define XHCI_USBSTS_HALTED (1u << 0)
#define XHCI_USBSTS_EVENT_INTERRUPT (1u << 3)
#define XHCI_USBSTS_NOT_READY (1u << 11)

/* PORTSC: status, the reset, and the change bits (written 1 to clear). */
#define XHCI_PORTSC_CONNECTED (1u << 0)
#define XHCI_PORTSC_ENABLED (1u << 1) /* written 1: disables the port, so never echoed */
#define XHCI_PORTSC_RESET (1u << 4)
#define XHCI_PORTSC_POWER (1u << 9)
#define XHCI_PORTSC_SPEED(value) (((value) >> 10) & 0xf)
#define XHCI_PORTSC_CHANGES 0x00fe0000u /* CSC PEC WRC OCC PRC PLC CEC */
#define XHCI_PORTSC_RESET_CHANGE (1u << 21)
/* Protocol speed IDs of the default mapping. */
#define XHCI_SPEED_FULL 1
#define XHCI_SPEED_LOW 2
#define XHCI_SPEED_HIGH 3
#define XHCI_SPEED_SUPER 4

/* Runtime registers: interrupter 0. */
#define XHCI_IMAN 0x20
#define XHCI_ERSTSZ 0x28
#define XHCI_ERSTBA 0x30
#define XHCI_ERDP 0x38
#define XHCI_IMAN_PENDING (1u << 0)
#define XHCI_IMAN_ENABLE (1u << 1)
#define XHCI_ERDP_BUSY (1u << 3) /* event handler busy: written 1 to clear */

/* Extended capability 1: USB legacy support (the firmware's hand-off). */
#define XHCI_EXTENDED_LEGACY 1
#define XHCI_LEGACY_BIOS_OWNED (1u << 16)
#define XHCI_LEGACY_OS_OWNED (1u << 24)
#define XHCI_LEGACY_CONTROL 4 /* USBLEGCTLSTS: SMI enables (low bits), status (29-31) */
#define XHCI_LEGACY_SMI_ENABLES 0x0000e011u
#define XHCI_LEGACY_SMI_STATUS 0xe0000000u

/* Transfer request blocks. */
struct xhci_trb {
    uint64_t parameter;
    uint32_t status;
    uint32_t control;
};
#define XHCI_TRB_CYCLE (1u << 0)
#define XHCI_TRB_TOGGLE_CYCLE (1u << 1) /* link TRB */
#define XHCI_TRB_SHORT_OK (1u << 2)     /* interrupt on short packet */
#define XHCI_TRB_IOC (1u << 5)          /* interrupt on completion */
#define XHCI_TRB_IMMEDIATE (1u << 6)    /* the parameter holds the data (setup stage) */
#define XHCI_TRB_TYPE(type) ((uint32_t)(type) << 10)
#define XHCI_TRB_TYPE_OF(control) (((control) >> 10) & 0x3f)
#define XHCI_TRB_SLOT(slot) ((uint32_t)(slot) << 24)
#define XHCI_TRB_SLOT_OF(control) ((control) >> 24)
#define XHCI_TRB_ENDPOINT_OF(control) (((control) >> 16) & 0x1f)
#define XHCI_TRB_DIRECTION_IN (1u << 16)  /* data and status stages */
#define XHCI_TRB_SETUP_IN_DATA (3u << 16) /* setup stage: an IN data stage follows */
#define XHCI_TRB_COMPLETION_OF(status) ((status) >> 24)
#define XHCI_TRB_RESIDUE_OF(status) ((status)&0xffffff)

enum xhci_trb_type {
    XHCI_TRB_NORMAL = 1,
    XHCI_TRB_SETUP = 2,
    XHCI_TRB_DATA = 3,
    XHCI_TRB_STATUS = 4,
    XHCI_TRB_LINK = 6,
    XHCI_TRB_ENABLE_SLOT = 9,
    XHCI_TRB_ADDRESS_DEVICE = 11,
    XHCI_TRB_CONFIGURE_ENDPOINT = 12,
    XHCI_TRB_EVALUATE_CONTEXT = 13,
    XHCI_TRB_TRANSFER_EVENT = 32,
    XHCI_TRB_COMMAND_COMPLETION = 33,
    XHCI_TRB_PORT_STATUS_CHANGE = 34,
};
#define XHCI_COMPLETION_SUCCESS 1
#define XHCI_COMPLETION_SHORT_PACKET 13

/* Contexts (32 or 64 bytes each, HCCPARAMS1.CSZ): dword fields. */
#define XHCI_SLOT_ROUTE_SPEED_ENTRIES 0 /* speed (23:20), context entries (31:27) */
#define XHCI_SLOT_PORT 1                /* root hub port number (23:16) */
#define XHCI_ENDPOINT_INTERVAL 0        /* interval (23:16) */
#define XHCI_ENDPOINT_TYPE_SIZE 1       /* error count (2:1), type (5:3), max packet (31:16) */
#define XHCI_ENDPOINT_DEQUEUE_LOW 2
#define XHCI_ENDPOINT_DEQUEUE_HIGH 3
#define XHCI_ENDPOINT_AVERAGE 4 /* average TRB length (15:0), max ESIT payload (31:16) */
#define XHCI_ENDPOINT_CONTROL 4
#define XHCI_ENDPOINT_INTERRUPT_IN 7
#define XHCI_ENDPOINT_ERRORS 3

/* USB 2.0 chapter 9 and HID 1.11 section 7. */
#define USB_REQUEST_GET_DESCRIPTOR 6
#define USB_REQUEST_SET_CONFIGURATION 9
#define USB_REQUEST_HID_SET_IDLE 0x0a
#define USB_REQUEST_HID_SET_PROTOCOL 0x0b
#define USB_TYPE_DEVICE_IN 0x80
#define USB_TYPE_DEVICE_OUT 0x00
#define USB_TYPE_CLASS_INTERFACE_OUT 0x21
#define USB_DESCRIPTOR_DEVICE 1
#define USB_DESCRIPTOR_CONFIGURATION 2
#define USB_DESCRIPTOR_INTERFACE 4
#define USB_DESCRIPTOR_ENDPOINT 5
#define USB_CLASS_HID 3
#define USB_HID_SUBCLASS_BOOT 1
#define USB_HID_PROTOCOL_KEYBOARD 1
#define USB_HID_BOOT_PROTOCOL 0
#define USB_ENDPOINT_IN 0x80
#define USB_ENDPOINT_INTERRUPT 3
