/* pci_msi.c: a PCI function's MSI capability (PCI Local Bus 3.0, 6.8.1):
 * the message address and data in the 32- or 64-bit layout the capability
 * says, one vector (multiple message enable 0), then Enable. For drivers
 * that take the message from irq_attach_msi (the e1000e network card). */
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/pci.h>

#define MSI_CONTROL 2
#define MSI_ADDRESS 4
#define MSI_ADDRESS_HIGH 8
#define MSI_DATA_32 8
#define MSI_DATA_64 12
#define MSI_ENABLE 1u
#define MSI_MULTIPLE_ENABLE (7u << 4)
#define MSI_64_BIT (1u << 7)

static long control_of(const struct pci_function *function, uint8_t capability)
{
    return pci_config_read(function->bus, function->device, function->function,
                           capability + MSI_CONTROL, 2);
}

static void write_config(const struct pci_function *function, uint32_t offset, uint32_t width,
                         uint32_t value)
{
    pci_config_write(function->bus, function->device, function->function, offset, width, value);
}

long pci_msi_enable(const struct pci_function *function, const struct msi_message *message)
{
    uint8_t capability = pci_find_capability(function, PCI_CAPABILITY_MSI);
    if (capability == 0)
        return -E_NOT_FOUND;
    long control = control_of(function, capability);
    if (control < 0)
        return control;
    uint32_t off = (uint32_t)control & ~(MSI_ENABLE | MSI_MULTIPLE_ENABLE);
    write_config(function, capability + MSI_CONTROL, 2, off);
    write_config(function, capability + MSI_ADDRESS, 4, (uint32_t)message->address);
    if (control & MSI_64_BIT) {
        write_config(function, capability + MSI_ADDRESS_HIGH, 4,
                     (uint32_t)(message->address >> 32));
        write_config(function, capability + MSI_DATA_64, 2, message->data);
    } else {
        write_config(function, capability + MSI_DATA_32, 2, message->data);
    }
    write_config(function, capability + MSI_CONTROL, 2, off | MSI_ENABLE);
    return 0;
}

void pci_msi_disable(const struct pci_function *function)
{
    uint8_t capability = pci_find_capability(function, PCI_CAPABILITY_MSI);
    if (capability == 0)
        return;
    long control = control_of(function, capability);
    if (control >= 0 && (control & MSI_ENABLE))
        write_config(function, capability + MSI_CONTROL, 2, (uint32_t)control & ~MSI_ENABLE);
}
