/* nvme_interrupt.c: the NVMe controller's interrupt. MSI-X table entry 0
 * gets the message of irq_attach_msi (a vector on DK's core); every
 * completion queue uses vector 0. Without MSI-X (no capability, an APIC ID
 * MSI cannot name, or kernel option nvme_irq=intx) the PCI INTx line
 * through the IOAPIC, as the other drivers use. */
#include "nvme_interrupt.h"
#include "nvme_options.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <stdio.h>

#define CAPABILITY_MSIX 0x11
#define MSIX_CONTROL 2 /* message control: table size - 1 (bits 10:0), mask (14), enable (15) */
#define MSIX_TABLE 4   /* table offset | BAR indicator (bits 2:0) */
#define MSIX_ENABLE (1u << 15)
#define MSIX_FUNCTION_MASK (1u << 14)
#define MSIX_ENTRY_BYTES 16
#define MSIX_VECTOR_MASKED 1u

static const char *kind = "none";

static long config_read(const struct pci_function *function, uint32_t offset, uint32_t width)
{
    return pci_config_read(function->bus, function->device, function->function, offset, width);
}

static void config_write(const struct pci_function *function, uint32_t offset, uint32_t width,
                         uint32_t value)
{
    pci_config_write(function->bus, function->device, function->function, offset, width, value);
}

/* Entry 0 of the MSI-X table (in the BAR the capability names) <- message. */
static long program_entry(const struct pci_function *function, uint8_t capability,
                          const struct msi_message *message)
{
    uint32_t table = (uint32_t)config_read(function, capability + MSIX_TABLE, 4);
    bool is_io = true;
    uint64_t bar = pci_bar(function, table & 7, &is_io);
    if (is_io || bar == 0) {
        printf("dk: NVMe MSI-X table in BAR %u, which is not a memory BAR\n", table & 7);
        return -E_INVALID;
    }
    long address = device_map(bar + (table & ~7u), MSIX_ENTRY_BYTES);
    if (address < 0)
        return address;
    volatile uint32_t *entry = (volatile uint32_t *)address;
    entry[0] = (uint32_t)message->address;
    entry[1] = (uint32_t)(message->address >> 32);
    entry[2] = message->data;
    entry[3] = 0; /* unmasked */
    return 0;
}

/* -E_BUSY when another driver has the controller; another error: use INTx. */
static long attach_msix(const struct pci_function *function, uint8_t capability)
{
    struct msi_message message;
    long error = irq_attach_msi(function->bus, function->device, function->function, &message);
    if (error < 0)
        return error;
    uint32_t control = (uint32_t)config_read(function, capability + MSIX_CONTROL, 2);
    config_write(function, capability + MSIX_CONTROL, 2,
                 control | MSIX_ENABLE | MSIX_FUNCTION_MASK);
    error = program_entry(function, capability, &message);
    if (error < 0) {
        printf("dk: NVMe MSI-X table not reachable: %s\n", error_text(error));
        return -E_BUSY; /* the MSI vector is ours now: no INTx line can be attached as well */
    }
    config_write(function, capability + MSIX_CONTROL, 2,
                 (control | MSIX_ENABLE) & ~MSIX_FUNCTION_MASK);
    kind = "msi-x";
    return 0;
}

static long attach_intx(const struct pci_function *function, uint8_t capability)
{
    if (capability != 0) { /* a previous driver may have left MSI-X on, which silences INTx */
        uint32_t control = (uint32_t)config_read(function, capability + MSIX_CONTROL, 2);
        config_write(function, capability + MSIX_CONTROL, 2, control & ~MSIX_ENABLE);
    }
    long gsi = irq_attach(function->interrupt_line);
    if (gsi < 0) {
        printf("dk: NVMe interrupt line %u: %s\n", function->interrupt_line, error_text(gsi));
        return gsi;
    }
    kind = "intx";
    return 0;
}

long nvme_interrupt_attach(const struct pci_function *function)
{
    uint8_t capability = pci_find_capability(function, CAPABILITY_MSIX);
    if (capability != 0 && !nvme_option_intx()) {
        long error = attach_msix(function, capability);
        if (error == 0 || error == -E_BUSY) {
            if (error < 0)
                printf("dk: NVMe controller %02x:%02x.%u: %s\n", function->bus, function->device,
                       function->function, error_text(error));
            return error;
        }
        printf("dk: NVMe MSI-X refused (%s): using INTx\n", error_text(error));
    }
    return attach_intx(function, capability);
}

const char *nvme_interrupt_kind(void)
{
    return kind;
}
