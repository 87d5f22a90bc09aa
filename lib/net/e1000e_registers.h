/* e1000e_registers.h: the Intel 82574L registers, bits and legacy descriptors
 * that lib/net/e1000e.c uses (82574 GbE controller datasheet, chapters 7, 8
 * and 10; QEMU's -device e1000e models the same). Offsets are bytes into the
 * memory BAR 0; every register is 32 bits wide. */
#pragma once
#include <stdint.h>

#define E1000E_VENDOR_INTEL 0x8086
#define E1000E_DEVICE_82574L 0x10d3

/* General */
#define E1000E_CTRL 0x0000
#define E1000E_STATUS 0x0008
#define E1000E_EECD 0x0010
#define E1000E_EERD 0x0014
#define E1000E_CTRL_EXT 0x0018
/* Interrupts */
#define E1000E_ICR 0x00c0 /* cause, cleared by writing its bits back */
#define E1000E_ITR 0x00c4 /* throttling interval in 256 ns units (0: none) */
#define E1000E_IMS 0x00d0
#define E1000E_IMC 0x00d8
/* Receive */
#define E1000E_RCTL 0x0100
#define E1000E_RDBAL 0x2800
#define E1000E_RDBAH 0x2804
#define E1000E_RDLEN 0x2808
#define E1000E_RDH 0x2810
#define E1000E_RDT 0x2818
#define E1000E_RDTR 0x2820 /* receive delay timer: 0, an interrupt per frame */
#define E1000E_RADV 0x282c
#define E1000E_RFCTL 0x5008
#define E1000E_MTA 0x5200 /* 128 multicast hash words */
#define E1000E_MTA_WORDS 128
#define E1000E_RAL(n) (0x5400 + 8 * (n))
#define E1000E_RAH(n) (0x5404 + 8 * (n))
#define E1000E_RECEIVE_ADDRESSES 16
/* Transmit */
#define E1000E_TCTL 0x0400
#define E1000E_TIPG 0x0410
#define E1000E_TDBAL 0x3800
#define E1000E_TDBAH 0x3804
#define E1000E_TDLEN 0x3808
#define E1000E_TDH 0x3810
#define E1000E_TDT 0x3818
#define E1000E_TIDV 0x3820
#define E1000E_TADV 0x382c
#define E1000E_TARC0 0x3840

/* CTRL */
#define E1000E_CTRL_GIO_MASTER_DISABLE (1u << 2)
#define E1000E_CTRL_LINK_RESET (1u << 3)
#define E1000E_CTRL_AUTO_SPEED (1u << 5) /* ASDE */
#define E1000E_CTRL_SET_LINK_UP (1u << 6)
#define E1000E_CTRL_FORCE_SPEED (1u << 11)
#define E1000E_CTRL_FORCE_DUPLEX (1u << 12)
#define E1000E_CTRL_RESET (1u << 26) /* self-clearing */
#define E1000E_CTRL_VLAN_MODE (1u << 30)
#define E1000E_CTRL_PHY_RESET (1u << 31)
/* STATUS */
#define E1000E_STATUS_LINK_UP (1u << 1)
#define E1000E_STATUS_GIO_MASTER_ENABLED (1u << 19)
/* EECD: the EEPROM's contents were loaded after reset */
#define E1000E_EECD_AUTO_READ_DONE (1u << 9)
/* EERD: write START with the word address, poll DONE, the word in 31:16 */
#define E1000E_EERD_START 1u
#define E1000E_EERD_DONE (1u << 1)
#define E1000E_EERD_ADDRESS_SHIFT 2
#define E1000E_EERD_DATA_SHIFT 16
/* ICR / IMS / IMC causes */
#define E1000E_CAUSE_LINK_CHANGE (1u << 2)     /* LSC */
#define E1000E_CAUSE_RECEIVE_LOW (1u << 4)     /* RXDMT0: few free receive descriptors */
#define E1000E_CAUSE_RECEIVE_OVERRUN (1u << 6) /* RXO */
#define E1000E_CAUSE_RECEIVED (1u << 7)        /* RXT0 */
#define E1000E_CAUSES_ALL 0xffffffffu
/* RCTL */
#define E1000E_RCTL_ENABLE (1u << 1)
#define E1000E_RCTL_UNICAST_PROMISCUOUS (1u << 3)
#define E1000E_RCTL_MULTICAST_PROMISCUOUS (1u << 4)
#define E1000E_RCTL_LONG_PACKETS (1u << 5)               /* LPE: jumbo frames */
#define E1000E_RCTL_BROADCAST (1u << 15)                 /* BAM */
#define E1000E_RCTL_BUFFER_16K ((1u << 16) | (1u << 25)) /* BSIZE 01 with BSEX */
#define E1000E_RCTL_STRIP_CRC (1u << 26)                 /* SECRC */
/* RFCTL */
#define E1000E_RFCTL_EXTENDED (1u << 15) /* EXTEN: extended descriptors; off = legacy */
/* RAH */
#define E1000E_RAH_VALID (1u << 31)
/* TCTL: enable, pad short frames, collision threshold 15, distance 63 (full duplex) */
#define E1000E_TCTL_ENABLE (1u << 1)
#define E1000E_TCTL_PAD_SHORT (1u << 3)
#define E1000E_TCTL_COLLISION_THRESHOLD (15u << 4)
#define E1000E_TCTL_COLLISION_DISTANCE (63u << 12)
#define E1000E_TCTL_RETRANSMIT_LATE (1u << 24)
/* TIPG for copper: IPGT 8, IPGR1 8, IPGR2 6 */
#define E1000E_TIPG_COPPER (8u | (8u << 10) | (6u << 20))
/* TARC0: the transmit queue takes part in arbitration */
#define E1000E_TARC_ENABLE (1u << 10)

/* The legacy receive descriptor (RFCTL.EXTEN off). */
struct e1000e_receive_descriptor {
    uint64_t buffer;
    uint16_t length;
    uint16_t checksum;
    uint8_t status;
    uint8_t errors;
    uint16_t special;
};
_Static_assert(sizeof(struct e1000e_receive_descriptor) == 16, "the card's 16-byte layout");
#define E1000E_RECEIVE_DONE 1u       /* DD */
#define E1000E_RECEIVE_END (1u << 1) /* EOP: the frame's last buffer */

/* The legacy transmit descriptor. */
struct e1000e_transmit_descriptor {
    uint64_t buffer;
    uint16_t length;
    uint8_t checksum_offset;
    uint8_t command;
    uint8_t status;
    uint8_t checksum_start;
    uint16_t special;
};
_Static_assert(sizeof(struct e1000e_transmit_descriptor) == 16, "the card's 16-byte layout");
#define E1000E_TRANSMIT_END 1u               /* EOP */
#define E1000E_TRANSMIT_INSERT_FCS (1u << 1) /* IFCS */
#define E1000E_TRANSMIT_REPORT (1u << 3)     /* RS: write DD back when sent */
#define E1000E_TRANSMIT_DONE 1u              /* DD */

/* The EEPROM: words 0-2 the MAC address, the sum of words 0x00-0x3f is 0xbaba. */
#define E1000E_EEPROM_CHECKED_WORDS 0x40
#define E1000E_EEPROM_SUM 0xbaba

/* Register access through the mapped BAR 0 (uncached: each access reaches the card). */
static inline uint32_t e1000e_read(volatile uint32_t *registers, uint32_t offset)
{
    return registers[offset / 4];
}

static inline void e1000e_write(volatile uint32_t *registers, uint32_t offset, uint32_t value)
{
    registers[offset / 4] = value;
}
