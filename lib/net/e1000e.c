/* e1000e.c: the Intel 82574L (QEMU -device e1000e) behind net_device.c:
 * the card's reset, its MAC from the EEPROM (e1000e_eeprom.c), one receive
 * ring of 16 KiB buffers and one transmit ring in legacy descriptors, jumbo
 * frames of 9014 bytes (MTU 9000: the memory nodes' 8 KiB fragments), MSI (or
 * INTx) for received frames and link changes (docs/drivers.md, "e1000e"). */
#include "e1000e_eeprom.h"
#include "e1000e_registers.h"
#include "net_driver.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/net.h>
#include <formica/pci.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define REGISTER_BYTES 0x20000 /* BAR 0: 128 KiB of registers */
#define RECEIVE_DESCRIPTORS 128
#define TRANSMIT_DESCRIPTORS 64
#define RECEIVE_BUFFER_BYTES 16384 /* RCTL.BSIZE 16 KiB: a whole jumbo frame in one buffer */
#define TRANSMIT_BUFFER_BYTES 9216
#define MAX_FRAME 9014 /* MTU 9000 + the Ethernet header; the 82574L takes 9018 with its FCS */
#define RESET_WAIT_MS 10
#define REGISTER_WAIT_US                                                                           \
    100000 /* reset, master disable, EEPROM auto-read: far longer than needed */
#define INTERRUPT_CAUSES                                                                           \
    (E1000E_CAUSE_RECEIVED | E1000E_CAUSE_RECEIVE_OVERRUN | E1000E_CAUSE_RECEIVE_LOW |             \
     E1000E_CAUSE_LINK_CHANGE)

static struct {
    volatile uint32_t *registers;
    char where[16];          /* "bb:dd.f", for the console lines */
    uint64_t rings_physical; /* the receive ring, then the transmit ring */
    volatile struct e1000e_receive_descriptor *receive_ring;
    volatile struct e1000e_transmit_descriptor *transmit_ring;
    uint8_t *receive_buffers, *transmit_buffers;
    uint64_t receive_buffers_physical, transmit_buffers_physical;
    unsigned receive_next;   /* the next descriptor the card fills */
    bool holding;            /* receive_next's frame is lent to the caller */
    bool dropping;           /* inside a frame longer than one buffer: dropped to its end */
    unsigned transmit_tail;  /* the next descriptor to fill */
    unsigned transmit_clean; /* the oldest one the card may still be sending */
    bool link_up;
} card;

static uint32_t read_register(uint32_t offset)
{
    return e1000e_read(card.registers, offset);
}

static void write_register(uint32_t offset, uint32_t value)
{
    e1000e_write(card.registers, offset, value);
}

/* Waits until (register & mask) == wanted: true, or false after REGISTER_WAIT_US. */
static bool wait_for(uint32_t offset, uint32_t mask, uint32_t wanted)
{
    uint64_t deadline = net_now_us() + REGISTER_WAIT_US;
    while ((read_register(offset) & mask) != wanted) {
        if (net_now_us() > deadline)
            return false;
        yield();
    }
    return true;
}

static bool option_intx(void)
{
    char value[8];
    return kernel_option("e1000e_irq", value, sizeof(value)) >= 0 && strcmp(value, "intx") == 0;
}

/* MSI when the card has it (the vector is also the claim on the card), else
 * its INTx line, else polling when another driver owns that line. */
static long attach_interrupt(const struct pci_function *function, struct net_card *net_card)
{
    if (!option_intx() && pci_find_capability(function, PCI_CAPABILITY_MSI) != 0) {
        struct msi_message message;
        long error = irq_attach_msi(function->bus, function->device, function->function, &message);
        if (error == -E_BUSY)
            return error; /* another process drives the card */
        if (error == 0) {
            pci_msi_enable(function, &message);
            net_card->interrupts = true;
            net_card->interrupt_kind = "msi";
            return 0;
        }
        printf("net: e1000e at %s: MSI refused (%s); using INTx\n", card.where, error_text(error));
    }
    pci_msi_disable(function); /* a previous driver's MSI would silence INTx */
    long gsi = irq_attach(function->interrupt_line);
    if (gsi == -E_BUSY) {
        printf("net: e1000e at %s: interrupt line %u belongs to another driver; polling\n",
               card.where, function->interrupt_line);
        return 0;
    }
    if (gsi < 0)
        return gsi;
    net_card->interrupts = true;
    net_card->interrupt_kind = "intx";
    return 0;
}

static long map_registers(const struct pci_function *function)
{
    bool is_io = true;
    uint64_t bar = pci_bar(function, 0, &is_io);
    if (is_io || bar == 0) {
        printf("net: e1000e at %s: BAR 0 is not a memory BAR; the card is not used\n", card.where);
        return -E_IO;
    }
    long address = device_map(bar, REGISTER_BYTES);
    if (address < 0)
        return address;
    card.registers = (volatile uint32_t *)address;
    return 0;
}

/* Everything off, then the software reset (82574 datasheet 4.6.1): master
 * disable first, so no DMA is in flight, CTRL.RST, and the EEPROM's
 * auto-read after it. A card that skips a step is noted and tried on. */
static void reset_card(void)
{
    write_register(E1000E_IMC, E1000E_CAUSES_ALL);
    write_register(E1000E_RCTL, 0);
    write_register(E1000E_TCTL, E1000E_TCTL_PAD_SHORT);
    write_register(E1000E_CTRL, read_register(E1000E_CTRL) | E1000E_CTRL_GIO_MASTER_DISABLE);
    if (!wait_for(E1000E_STATUS, E1000E_STATUS_GIO_MASTER_ENABLED, 0))
        printf("net: e1000e at %s: bus mastering did not stop before the reset\n", card.where);
    write_register(E1000E_CTRL, read_register(E1000E_CTRL) | E1000E_CTRL_RESET);
    sleep_ms(RESET_WAIT_MS);
    if (!wait_for(E1000E_CTRL, E1000E_CTRL_RESET, 0))
        printf("net: e1000e at %s: the reset did not finish\n", card.where);
    write_register(E1000E_IMC, E1000E_CAUSES_ALL);
    write_register(E1000E_ICR, read_register(E1000E_ICR));
    if (!wait_for(E1000E_EECD, E1000E_EECD_AUTO_READ_DONE, E1000E_EECD_AUTO_READ_DONE))
        printf("net: e1000e at %s: the EEPROM auto-read did not finish\n", card.where);
}

/* The link comes up by itself (auto-negotiation, SLU), at the speed found. */
static void set_up_link(void)
{
    uint32_t control = read_register(E1000E_CTRL);
    control |= E1000E_CTRL_SET_LINK_UP | E1000E_CTRL_AUTO_SPEED;
    control &= ~(E1000E_CTRL_LINK_RESET | E1000E_CTRL_FORCE_SPEED | E1000E_CTRL_FORCE_DUPLEX |
                 E1000E_CTRL_VLAN_MODE | E1000E_CTRL_PHY_RESET | E1000E_CTRL_GIO_MASTER_DISABLE);
    write_register(E1000E_CTRL, control);
}

static long allocate_rings(void)
{
    struct dma_region rings, receive, transmit;
    long error = dma_allocate(RECEIVE_DESCRIPTORS * sizeof(struct e1000e_receive_descriptor) +
                                  TRANSMIT_DESCRIPTORS * sizeof(struct e1000e_transmit_descriptor),
                              &rings);
    if (error == 0)
        error = dma_allocate((uint64_t)RECEIVE_DESCRIPTORS * RECEIVE_BUFFER_BYTES, &receive);
    if (error == 0)
        error = dma_allocate((uint64_t)TRANSMIT_DESCRIPTORS * TRANSMIT_BUFFER_BYTES, &transmit);
    if (error < 0) {
        printf("net: e1000e at %s: no DMA memory for the rings: %s\n", card.where,
               error_text(error));
        return error;
    }
    card.receive_ring = (volatile struct e1000e_receive_descriptor *)rings.address;
    card.transmit_ring =
        (volatile struct e1000e_transmit_descriptor *)(rings.address +
                                                       RECEIVE_DESCRIPTORS *
                                                           sizeof(*card.receive_ring));
    card.receive_buffers = (uint8_t *)receive.address;
    card.receive_buffers_physical = receive.physical;
    card.transmit_buffers = (uint8_t *)transmit.address;
    card.transmit_buffers_physical = transmit.physical;
    card.rings_physical = rings.physical;
    return 0;
}

/* Our MAC in receive address 0, the other 15 and the multicast table empty:
 * the card takes frames for us and broadcasts only. */
static void set_up_addresses(const uint8_t mac[6])
{
    for (unsigned i = 0; i < E1000E_MTA_WORDS; i++)
        write_register(E1000E_MTA + 4 * i, 0);
    for (unsigned i = 1; i < E1000E_RECEIVE_ADDRESSES; i++) {
        write_register(E1000E_RAH(i), 0);
        write_register(E1000E_RAL(i), 0);
    }
    write_register(E1000E_RAL(0), (uint32_t)mac[0] | (uint32_t)mac[1] << 8 |
                                      (uint32_t)mac[2] << 16 | (uint32_t)mac[3] << 24);
    write_register(E1000E_RAH(0), (uint32_t)mac[4] | (uint32_t)mac[5] << 8 | E1000E_RAH_VALID);
}

/* Every receive descriptor has its buffer; the card may fill all but one
 * (RDT points at the one it must not: head == tail means empty). */
static void start_receiving(void)
{
    for (unsigned i = 0; i < RECEIVE_DESCRIPTORS; i++) {
        card.receive_ring[i] = (struct e1000e_receive_descriptor){
            .buffer = card.receive_buffers_physical + (uint64_t)i * RECEIVE_BUFFER_BYTES};
    }
    uint64_t ring = card.rings_physical;
    write_register(E1000E_RDBAL, (uint32_t)ring);
    write_register(E1000E_RDBAH, (uint32_t)(ring >> 32));
    write_register(E1000E_RDLEN, RECEIVE_DESCRIPTORS * sizeof(struct e1000e_receive_descriptor));
    write_register(E1000E_RDH, 0);
    write_register(E1000E_RDT, RECEIVE_DESCRIPTORS - 1);
    write_register(E1000E_RDTR, 0); /* an interrupt per frame, no delay */
    write_register(E1000E_RADV, 0);
    write_register(E1000E_RFCTL, read_register(E1000E_RFCTL) & ~E1000E_RFCTL_EXTENDED);
    card.receive_next = 0;
    write_register(E1000E_RCTL, E1000E_RCTL_ENABLE | E1000E_RCTL_BROADCAST |
                                    E1000E_RCTL_LONG_PACKETS | E1000E_RCTL_BUFFER_16K |
                                    E1000E_RCTL_STRIP_CRC);
}

static void start_transmitting(void)
{
    memset((void *)card.transmit_ring, 0,
           TRANSMIT_DESCRIPTORS * sizeof(struct e1000e_transmit_descriptor));
    uint64_t ring =
        card.rings_physical + RECEIVE_DESCRIPTORS * sizeof(struct e1000e_receive_descriptor);
    write_register(E1000E_TDBAL, (uint32_t)ring);
    write_register(E1000E_TDBAH, (uint32_t)(ring >> 32));
    write_register(E1000E_TDLEN, TRANSMIT_DESCRIPTORS * sizeof(struct e1000e_transmit_descriptor));
    write_register(E1000E_TDH, 0);
    write_register(E1000E_TDT, 0);
    write_register(E1000E_TIDV, 0);
    write_register(E1000E_TADV, 0);
    write_register(E1000E_TIPG, E1000E_TIPG_COPPER);
    write_register(E1000E_TARC0, read_register(E1000E_TARC0) | E1000E_TARC_ENABLE);
    card.transmit_tail = card.transmit_clean = 0;
    write_register(E1000E_TCTL, E1000E_TCTL_ENABLE | E1000E_TCTL_PAD_SHORT |
                                    E1000E_TCTL_COLLISION_THRESHOLD |
                                    E1000E_TCTL_COLLISION_DISTANCE | E1000E_TCTL_RETRANSMIT_LATE);
}

static void enable_interrupts(void)
{
    write_register(E1000E_ITR, 0); /* no throttling (QEMU keeps its own floor of 128 us) */
    write_register(E1000E_ICR, read_register(E1000E_ICR));
    write_register(E1000E_IMS, INTERRUPT_CAUSES);
}

/* The address the reset loaded into receive address 0, when it differs from
 * the EEPROM's (the EEPROM's is used). */
static void compare_loaded_address(const uint8_t mac[6])
{
    uint32_t low = read_register(E1000E_RAL(0)), high = read_register(E1000E_RAH(0));
    uint8_t loaded[6] = {(uint8_t)low,         (uint8_t)(low >> 8), (uint8_t)(low >> 16),
                         (uint8_t)(low >> 24), (uint8_t)high,       (uint8_t)(high >> 8)};
    if ((high & E1000E_RAH_VALID) && memcmp(loaded, mac, 6) != 0)
        printf("net: e1000e at %s: receive address 0 held %02x:%02x:%02x:%02x:%02x:%02x; "
               "using the EEPROM's\n",
               card.where, loaded[0], loaded[1], loaded[2], loaded[3], loaded[4], loaded[5]);
}

static long start_card(struct net_card *net_card)
{
    reset_card();
    long error = e1000e_eeprom_load(card.registers, card.where, net_card->mac);
    if (error == 0)
        error = allocate_rings();
    if (error < 0) {
        write_register(E1000E_IMC, E1000E_CAUSES_ALL); /* the card stays quiet */
        return error;
    }
    compare_loaded_address(net_card->mac);
    set_up_link();
    set_up_addresses(net_card->mac);
    start_receiving();
    start_transmitting();
    enable_interrupts();
    card.link_up = (read_register(E1000E_STATUS) & E1000E_STATUS_LINK_UP) != 0;
    net_card->link_up = card.link_up;
    net_card->max_frame = MAX_FRAME;
    return 0;
}

static long e1000e_open(struct net_card *net_card)
{
    struct pci_function function;
    if (!pci_find_device(E1000E_VENDOR_INTEL, E1000E_DEVICE_82574L, 0, &function))
        return -E_NOT_FOUND;
    net_card_name_location(net_card, &function);
    memcpy(card.where, net_card->where, sizeof(card.where));
    long error = attach_interrupt(&function, net_card); /* first: the claim on the card */
    if (error < 0) {
        printf("net: e1000e at %s: no interrupt (%s); the card is not used\n", card.where,
               error_text(error));
        return error;
    }
    pci_enable(&function);
    error = map_registers(&function);
    if (error == 0)
        error = start_card(net_card);
    return error;
}

/* ---- frames ---- */

static uint8_t *e1000e_transmit_buffer(void)
{
    while (card.transmit_clean != card.transmit_tail &&
           (card.transmit_ring[card.transmit_clean].status & E1000E_TRANSMIT_DONE))
        card.transmit_clean = (card.transmit_clean + 1) % TRANSMIT_DESCRIPTORS;
    if ((card.transmit_tail + 1) % TRANSMIT_DESCRIPTORS == card.transmit_clean)
        return NULL; /* every descriptor but the gap is in flight */
    return card.transmit_buffers + (size_t)card.transmit_tail * TRANSMIT_BUFFER_BYTES;
}

static void e1000e_transmit(size_t length)
{
    unsigned slot = card.transmit_tail;
    card.transmit_ring[slot] = (struct e1000e_transmit_descriptor){
        .buffer = card.transmit_buffers_physical + (uint64_t)slot * TRANSMIT_BUFFER_BYTES,
        .length = (uint16_t)length,
        .command = E1000E_TRANSMIT_END | E1000E_TRANSMIT_INSERT_FCS | E1000E_TRANSMIT_REPORT};
    card.transmit_tail = (slot + 1) % TRANSMIT_DESCRIPTORS;
    __atomic_thread_fence(__ATOMIC_RELEASE); /* the descriptor before the tail that shows it */
    write_register(E1000E_TDT, card.transmit_tail);
}

static void e1000e_transmit_cancel(void)
{
    /* nothing reached the card: the same buffer is the next one given out */
}

/* The descriptor receive_next goes back to the card (it becomes the gap). */
static void e1000e_receive_release(void)
{
    if (!card.holding)
        return;
    unsigned slot = card.receive_next;
    card.receive_ring[slot].status = 0;
    card.receive_next = (slot + 1) % RECEIVE_DESCRIPTORS;
    card.holding = false;
    write_register(E1000E_RDT, slot);
}

/* Frames with errors, and frames longer than a buffer (to their last
 * buffer), are given back unread. */
static long e1000e_receive(const uint8_t **frame)
{
    for (;;) {
        volatile struct e1000e_receive_descriptor *descriptor =
            &card.receive_ring[card.receive_next];
        uint8_t status = descriptor->status;
        if (!(status & E1000E_RECEIVE_DONE))
            return 0;
        __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the frame after the status that shows it */
        uint16_t length = descriptor->length;
        bool whole = !card.dropping && (status & E1000E_RECEIVE_END);
        card.dropping = !(status & E1000E_RECEIVE_END);
        card.holding = true;
        if (whole && descriptor->errors == 0 && length >= 14 && length <= RECEIVE_BUFFER_BYTES) {
            *frame = card.receive_buffers + (size_t)card.receive_next * RECEIVE_BUFFER_BYTES;
            return length;
        }
        e1000e_receive_release();
    }
}

/* ICR's causes are written back to clear them (a read alone clears them on
 * newer cards and QEMU models, not on every one); the link is read afresh. */
static bool e1000e_acknowledge(void)
{
    uint32_t causes = read_register(E1000E_ICR);
    if (causes != 0)
        write_register(E1000E_ICR, causes);
    card.link_up = (read_register(E1000E_STATUS) & E1000E_STATUS_LINK_UP) != 0;
    unsigned next =
        card.holding ? (card.receive_next + 1) % RECEIVE_DESCRIPTORS : card.receive_next;
    return (card.receive_ring[next].status & E1000E_RECEIVE_DONE) != 0;
}

static bool e1000e_link_up(void)
{
    return card.link_up;
}

const struct net_driver e1000e_driver = {
    .name = "e1000e",
    .open = e1000e_open,
    .transmit_buffer = e1000e_transmit_buffer,
    .transmit = e1000e_transmit,
    .transmit_cancel = e1000e_transmit_cancel,
    .receive = e1000e_receive,
    .receive_release = e1000e_receive_release,
    .acknowledge = e1000e_acknowledge,
    .link_up = e1000e_link_up,
};
