/* pci_interrupt.c: MSI-X, MSI or INTx for a driver (formica/pci_interrupt.h).
 * The kernel gives the MSI message (irq_attach_msi); the driver writes it
 * into the device: MSI-X table entry 0 in the BAR the capability names, or
 * the MSI capability's address and data registers. */
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/pci_interrupt.h>
#include <stdio.h>

#define CAPABILITY_MSI 0x05
#define CAPABILITY_MSIX 0x11
#define MSI_CONTROL 2 /* enable (0), 64-bit address (7), multiple message enable (6:4) */
#define MSI_ADDRESS_LOW 4
#define MSI_ENABLE 0x0001u
#define MSI_64_BIT 0x0080u
#define MSI_MULTIPLE_ENABLE 0x0070u
#define MSIX_CONTROL 2 /* table size - 1 (10:0), function mask (14), enable (15) */
#define MSIX_TABLE 4   /* table offset | BAR indicator (2:0) */
#define MSIX_ENABLE (1u << 15)
#define MSIX_FUNCTION_MASK (1u << 14)
#define MSIX_ENTRY_BYTES 16
#define PCI_COMMAND 4
#define PCI_COMMAND_INTX_OFF (1u << 10)

static long config_read(const struct pci_function *function, uint32_t offset, uint32_t width)
{
    return pci_config_read(function->bus, function->device, function->function, offset, width);
}

static void config_write(const struct pci_function *function, uint32_t offset, uint32_t width,
                         uint32_t value)
{
    pci_config_write(function->bus, function->device, function->function, offset, width, value);
}

static long msix_program(const struct pci_function *function, uint8_t capability,
                         const struct msi_message *message)
{
    uint32_t table = (uint32_t)config_read(function, capability + MSIX_TABLE, 4);
    bool is_io = true;
    uint64_t bar = pci_bar(function, table & 7, &is_io);
    if (is_io || bar == 0)
        return -E_INVALID;
    long address = device_map(bar + (table & ~7u), MSIX_ENTRY_BYTES);
    if (address < 0)
        return address;
    volatile uint32_t *entry = (volatile uint32_t *)address;
    entry[0] = (uint32_t)message->address;
    entry[1] = (uint32_t)(message->address >> 32);
    entry[2] = message->data;
    entry[3] = 0; /* unmasked */
    uint32_t control = (uint32_t)config_read(function, capability + MSIX_CONTROL, 2);
    config_write(function, capability + MSIX_CONTROL, 2,
                 (control | MSIX_ENABLE) & ~MSIX_FUNCTION_MASK);
    return 0;
}

static void msi_program(const struct pci_function *function, uint8_t capability,
                        const struct msi_message *message)
{
    uint32_t control = (uint32_t)config_read(function, capability + MSI_CONTROL, 2);
    config_write(function, capability + MSI_ADDRESS_LOW, 4, (uint32_t)message->address);
    uint32_t data_offset = MSI_ADDRESS_LOW + 4;
    if (control & MSI_64_BIT) {
        config_write(function, capability + MSI_ADDRESS_LOW + 4, 4,
                     (uint32_t)(message->address >> 32));
        data_offset += 4;
    }
    config_write(function, capability + data_offset, 2, message->data);
    config_write(function, capability + MSI_CONTROL, 2,
                 (control & ~MSI_MULTIPLE_ENABLE) | MSI_ENABLE); /* one vector */
}

/* Without MSI-X or MSI enabled, INTx is what the device raises. */
static void message_interrupts_off(const struct pci_function *function)
{
    uint8_t msix = pci_find_capability(function, CAPABILITY_MSIX);
    uint8_t msi = pci_find_capability(function, CAPABILITY_MSI);
    if (msix != 0)
        config_write(function, msix + MSIX_CONTROL, 2,
                     (uint32_t)config_read(function, msix + MSIX_CONTROL, 2) & ~MSIX_ENABLE);
    if (msi != 0)
        config_write(function, msi + MSI_CONTROL, 2,
                     (uint32_t)config_read(function, msi + MSI_CONTROL, 2) & ~MSI_ENABLE);
}

enum pci_interrupt_kind pci_interrupt_attach(const struct pci_function *function,
                                             const char *driver)
{
    uint8_t msix = pci_find_capability(function, CAPABILITY_MSIX);
    uint8_t msi = pci_find_capability(function, CAPABILITY_MSI);
    if (msix != 0 || msi != 0) {
        struct msi_message message;
        long error = irq_attach_msi(function->bus, function->device, function->function, &message);
        if (error == 0) {
            if (msix != 0 && msix_program(function, msix, &message) == 0) {
                config_write(function, PCI_COMMAND, 2,
                             (uint32_t)config_read(function, PCI_COMMAND, 2) |
                                 PCI_COMMAND_INTX_OFF);
                return PCI_INTERRUPT_MSIX;
            }
            if (msi != 0) {
                msi_program(function, msi, &message);
                return PCI_INTERRUPT_MSI;
            }
            printf("%s: MSI-X table not reachable and no MSI: polling\n", driver);
            return PCI_INTERRUPT_NONE; /* the vector is ours: no INTx line can be had too */
        }
        printf("%s: no MSI vector (%s): trying INTx\n", driver, error_text(error));
    }
    message_interrupts_off(function);
    long gsi = irq_attach(function->interrupt_line);
    if (gsi >= 0)
        return PCI_INTERRUPT_INTX;
    printf("%s: interrupt line %u: %s: polling\n", driver, function->interrupt_line,
           error_text(gsi));
    return PCI_INTERRUPT_NONE;
}

const char *pci_interrupt_name(enum pci_interrupt_kind kind)
{
    static const char *const names[] = {"none", "intx", "msi", "msi-x"};
    return kind <= PCI_INTERRUPT_MSIX ? names[kind] : "?";
}
