/* ahci.c: AHCI SATA driver. Finds the controller by class 01/06/01, maps
 * ABAR (BAR 5), takes the first port with a SATA disk, keeps its command
 * list, received-FIS area and 32 command tables in DMA memory. */
#include "disk_drivers.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/pci.h>
#include <stdio.h>
#include <string.h>

#define HBA_GHC 0x04
#define HBA_IS 0x08
#define HBA_PI 0x0c
#define GHC_AE (1u << 31)
#define GHC_IE (1u << 1)
#define PORT_BASE 0x100
#define PORT_BYTES 0x80
#define PORT_CLB 0x00
#define PORT_CLBU 0x04
#define PORT_FB 0x08
#define PORT_FBU 0x0c
#define PORT_IS 0x10
#define PORT_IE 0x14
#define PORT_CMD 0x18
#define PORT_TFD 0x20
#define PORT_SIG 0x24
#define PORT_SSTS 0x28
#define PORT_SERR 0x30
#define PORT_CI 0x38
#define CMD_ST (1u << 0)
#define CMD_FRE (1u << 4)
#define CMD_FR (1u << 14)
#define CMD_CR (1u << 15)
#define IS_ERRORS 0x7d800010u /* TFES, HBFS, HBDS, IFS, OFS, INFS, UFS */
#define IE_ALL 0x7d80007fu
#define TFD_BUSY 0x88
#define SIGNATURE_SATA 0x00000101u
#define SLOTS 32
#define TABLE_BYTES 256
#define FIS_H2D 0x27
#define ATA_IDENTIFY 0xec
#define ATA_READ_DMA_EXT 0x25
#define ATA_WRITE_DMA_EXT 0x35
#define ATA_FLUSH_CACHE_EXT 0xea
#define SPIN_LIMIT 10000000

struct command_header {
    uint32_t flags; /* FIS length in dwords, W (bit 6), PRDT length (bits 16-31) */
    uint32_t transferred;
    uint64_t table;
    uint32_t reserved[4];
};

struct ahci_state {
    volatile uint8_t *hba;
    volatile uint8_t *port_registers;
    unsigned port;
    volatile struct command_header *headers; /* 1 KiB command list */
    volatile uint8_t *tables;                /* SLOTS tables of TABLE_BYTES */
    uint64_t tables_physical;
    struct block_request *slots[SLOTS];
    uint32_t issued;
    uint8_t *identify;
    uint64_t identify_physical;
};

static struct ahci_state ahci;

static uint32_t hba_read(unsigned offset)
{
    return *(volatile uint32_t *)(ahci.hba + offset);
}

static void hba_write(unsigned offset, uint32_t value)
{
    *(volatile uint32_t *)(ahci.hba + offset) = value;
}

static uint32_t port_read(unsigned offset)
{
    return *(volatile uint32_t *)(ahci.port_registers + offset);
}

static void port_write(unsigned offset, uint32_t value)
{
    *(volatile uint32_t *)(ahci.port_registers + offset) = value;
}

static bool wait_clear(unsigned offset, uint32_t bits)
{
    for (int i = 0; i < SPIN_LIMIT; i++)
        if ((port_read(offset) & bits) == 0)
            return true;
    return false;
}

static void port_stop(void)
{
    port_write(PORT_CMD, port_read(PORT_CMD) & ~CMD_ST);
    wait_clear(PORT_CMD, CMD_CR);
    port_write(PORT_CMD, port_read(PORT_CMD) & ~CMD_FRE);
    wait_clear(PORT_CMD, CMD_FR);
}

static void port_start(void)
{
    port_write(PORT_SERR, 0xffffffffu);
    port_write(PORT_IS, 0xffffffffu);
    wait_clear(PORT_TFD, TFD_BUSY);
    port_write(PORT_CMD, port_read(PORT_CMD) | CMD_FRE);
    port_write(PORT_CMD, port_read(PORT_CMD) | CMD_ST);
}

/* Fills slot `slot`'s command table and header: one H2D FIS, one PRD. */
static void build_command(unsigned slot, uint8_t command, uint64_t lba, uint32_t sectors,
                          uint64_t physical, uint32_t bytes, bool write)
{
    volatile uint8_t *table = ahci.tables + slot * TABLE_BYTES;
    for (unsigned i = 0; i < TABLE_BYTES; i++)
        table[i] = 0;
    const uint8_t fis[16] = {FIS_H2D,
                             0x80,
                             command,
                             0,
                             (uint8_t)lba,
                             (uint8_t)(lba >> 8),
                             (uint8_t)(lba >> 16),
                             1u << 6,
                             (uint8_t)(lba >> 24),
                             (uint8_t)(lba >> 32),
                             (uint8_t)(lba >> 40),
                             0,
                             (uint8_t)sectors,
                             (uint8_t)(sectors >> 8),
                             0,
                             0};
    for (unsigned i = 0; i < sizeof(fis); i++)
        table[i] = fis[i];
    volatile uint32_t *prd = (volatile uint32_t *)(table + 0x80);
    prd[0] = (uint32_t)physical;
    prd[1] = (uint32_t)(physical >> 32);
    prd[3] = (bytes - 1) | (1u << 31);
    uint32_t prds = bytes > 0 ? 1u : 0u; /* FLUSH CACHE EXT moves no data */
    ahci.headers[slot].flags = 5 | (write ? 1u << 6 : 0) | prds << 16;
    ahci.headers[slot].transferred = 0;
    ahci.headers[slot].table = ahci.tables_physical + slot * TABLE_BYTES;
}

static void issue(unsigned slot)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    ahci.issued |= 1u << slot;
    port_write(PORT_CI, 1u << slot);
}

static long ahci_submit(struct block_device *device, struct block_request *request)
{
    (void)device;
    unsigned slot = 0;
    while (slot < SLOTS && (ahci.issued & (1u << slot)))
        slot++;
    if (slot == SLOTS)
        return -E_BUSY;
    ahci.slots[slot] = request;
    if (request->flush)
        build_command(slot, ATA_FLUSH_CACHE_EXT, 0, 0, 0, 0, false);
    else
        build_command(slot, request->write ? ATA_WRITE_DMA_EXT : ATA_READ_DMA_EXT, request->lba,
                      request->sectors, request->physical, request->sectors * SECTOR_BYTES,
                      request->write);
    issue(slot);
    return 0;
}

static void finish(unsigned slot, long status)
{
    ahci.issued &= ~(1u << slot);
    struct block_request *request = ahci.slots[slot];
    ahci.slots[slot] = NULL;
    if (request != NULL) {
        request->status = status;
        request->done = true;
    }
}

/* A task-file error stops the port's command engine: every command in
 * flight fails with -E_IO and the port is restarted (AHCI 1.3, 6.2.2.1). */
static void recover_from_error(void)
{
    port_stop();
    for (unsigned slot = 0; slot < SLOTS; slot++)
        if (ahci.issued & (1u << slot))
            finish(slot, -E_IO);
    port_start();
}

static void ahci_complete(struct block_device *device)
{
    (void)device;
    uint32_t status = port_read(PORT_IS);
    port_write(PORT_IS, status);
    hba_write(HBA_IS, 1u << ahci.port);
    if (status & IS_ERRORS) {
        recover_from_error();
        return;
    }
    uint32_t still_running = port_read(PORT_CI);
    for (unsigned slot = 0; slot < SLOTS; slot++)
        if ((ahci.issued & (1u << slot)) && !(still_running & (1u << slot)))
            finish(slot, 0);
}

static bool port_has_disk(unsigned port)
{
    volatile uint8_t *registers = ahci.hba + PORT_BASE + port * PORT_BYTES;
    uint32_t status = *(volatile uint32_t *)(registers + PORT_SSTS);
    uint32_t signature = *(volatile uint32_t *)(registers + PORT_SIG);
    return (status & 0xf) == 3 && signature == SIGNATURE_SATA;
}

static bool set_up_port(unsigned port)
{
    struct dma_region memory;
    if (dma_allocate(4096 + SLOTS * TABLE_BYTES + 4096, &memory) < 0)
        return false;
    ahci.port = port;
    ahci.port_registers = ahci.hba + PORT_BASE + port * PORT_BYTES;
    ahci.headers = (volatile struct command_header *)memory.address; /* 1 KiB, then the FIS area */
    ahci.tables = (volatile uint8_t *)(memory.address + 4096);
    ahci.tables_physical = memory.physical + 4096;
    ahci.identify = (uint8_t *)(memory.address + 4096 + SLOTS * TABLE_BYTES);
    ahci.identify_physical = memory.physical + 4096 + SLOTS * TABLE_BYTES;
    port_stop();
    port_write(PORT_CLB, (uint32_t)memory.physical);
    port_write(PORT_CLBU, (uint32_t)(memory.physical >> 32));
    port_write(PORT_FB, (uint32_t)(memory.physical + 1024));
    port_write(PORT_FBU, (uint32_t)((memory.physical + 1024) >> 32));
    port_write(PORT_IE, IE_ALL);
    port_start();
    return true;
}

/* IDENTIFY DEVICE, polled (before interrupts matter): the LBA48 capacity. */
static uint64_t identify_sectors(void)
{
    build_command(0, ATA_IDENTIFY, 0, 0, ahci.identify_physical, SECTOR_BYTES, false);
    issue(0);
    bool finished = wait_clear(PORT_CI, 1u);
    uint32_t status = port_read(PORT_IS);
    port_write(PORT_IS, status);
    hba_write(HBA_IS, 1u << ahci.port);
    ahci.issued = 0;
    if (!finished || (status & IS_ERRORS))
        return 0;
    uint64_t sectors;
    memcpy(&sectors, ahci.identify + 200, sizeof(sectors)); /* words 100-103 */
    if (sectors == 0) {
        uint32_t lba28;
        memcpy(&lba28, ahci.identify + 120, sizeof(lba28)); /* words 60-61 */
        sectors = lba28;
    }
    return sectors;
}

/* IDENTIFY's serial (words 10-19: ASCII, each word's two bytes swapped,
 * padded with spaces), its trailing spaces dropped. */
static void identified_serial(char serial[BLOCK_DEVICE_SERIAL_BYTES])
{
    for (unsigned i = 0; i < BLOCK_DEVICE_SERIAL_BYTES; i += 2) {
        serial[i] = (char)ahci.identify[20 + i + 1];
        serial[i + 1] = (char)ahci.identify[20 + i];
    }
    for (unsigned i = BLOCK_DEVICE_SERIAL_BYTES; i > 0 && (serial[i - 1] == ' '); i--)
        serial[i - 1] = '\0';
}

static bool map_controller(const struct pci_function *function)
{
    bool is_io = true;
    uint64_t abar = pci_bar(function, 5, &is_io);
    if (is_io || abar == 0) {
        printf("dk: AHCI controller without a memory BAR 5\n");
        return false;
    }
    pci_enable(function);
    long address = device_map(abar, PORT_BASE + SLOTS * PORT_BYTES);
    if (address < 0) {
        printf("dk: cannot map ABAR 0x%lx: %s\n", abar, error_text(address));
        return false;
    }
    ahci.hba = (volatile uint8_t *)address;
    hba_write(HBA_GHC, hba_read(HBA_GHC) | GHC_AE);
    return true;
}

static long find_port(void)
{
    uint32_t implemented = hba_read(HBA_PI);
    for (unsigned port = 0; port < 32; port++)
        if ((implemented & (1u << port)) && port_has_disk(port))
            return port;
    return -1;
}

bool ahci_probe(struct block_device *device)
{
    struct pci_function function;
    if (!pci_find_class(0x01, 0x06, 0x01, 0, &function))
        return false;
    long gsi = irq_attach(function.interrupt_line); /* first: it also claims the controller */
    if (gsi < 0) {
        printf("dk: AHCI interrupt line %u: %s\n", function.interrupt_line, error_text(gsi));
        return false;
    }
    if (!map_controller(&function))
        return false;
    long port = find_port();
    if (port < 0) {
        printf("dk: AHCI controller %02x:%02x.%u has no SATA disk\n", function.bus, function.device,
               function.function);
        return false;
    }
    if (!set_up_port((unsigned)port))
        return false;
    uint64_t sectors = identify_sectors();
    if (sectors == 0) {
        printf("dk: AHCI port %ld: IDENTIFY failed\n", port);
        return false;
    }
    hba_write(HBA_IS, 0xffffffffu);
    hba_write(HBA_GHC, hba_read(HBA_GHC) | GHC_IE);
    memset(device, 0, sizeof(*device));
    device->driver = "ahci";
    device->sectors = sectors;
    device->port = (unsigned)port;
    device->max_outstanding = SLOTS;
    device->volatile_cache = true; /* FLUSH CACHE EXT is mandatory for ATA-6 and later */
    device->submit = ahci_submit;
    device->complete = ahci_complete;
    device->state = &ahci;
    identified_serial(device->serial);
    return true;
}
