/* nvme_interrupt.c: the NVMe controller's interrupt. For now the PCI INTx
 * line, routed by irq_attach through the IOAPIC like the other drivers. */
#include "nvme_interrupt.h"
#include <formica/device.h>
#include <formica/errors.h>
#include <stdio.h>

static const char *kind = "none";

long nvme_interrupt_attach(const struct pci_function *function)
{
    long gsi = irq_attach(function->interrupt_line);
    if (gsi < 0) {
        printf("dk: NVMe interrupt line %u: %s\n", function->interrupt_line, error_text(gsi));
        return gsi;
    }
    kind = "intx";
    return 0;
}

const char *nvme_interrupt_kind(void)
{
    return kind;
}
