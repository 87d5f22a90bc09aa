/* nvme_interrupt.c: the NVMe controller's interrupt: MSI-X table entry 0
 * (a vector on DK's core; every completion queue uses vector 0), or,
 * without MSI-X (no capability, an APIC ID MSI cannot name, or kernel
 * option nvme_irq=intx), the INTx line, through lib/pci_interrupt.c. */
#include "nvme_interrupt.h"
#include "nvme_options.h"
#include <formica/errors.h>
#include <formica/pci_interrupt.h>
#include <stdio.h>

static const char *kind = "none";

long nvme_interrupt_attach(const struct pci_function *function)
{
    unsigned takes = PCI_INTERRUPT_TAKES_INTX | (nvme_option_intx() ? 0 : PCI_INTERRUPT_TAKES_MSIX);
    long attached = pci_interrupt_attach(function, "dk: NVMe", takes);
    if (attached == -E_BUSY)
        printf("dk: NVMe controller %02x:%02x.%u: %s\n", function->bus, function->device,
               function->function, error_text(attached));
    if (attached < 0)
        return attached;
    if (attached == PCI_INTERRUPT_NONE)
        return -E_NOT_FOUND;
    kind = pci_interrupt_name((enum pci_interrupt_kind)attached);
    return 0;
}

const char *nvme_interrupt_kind(void)
{
    return kind;
}
