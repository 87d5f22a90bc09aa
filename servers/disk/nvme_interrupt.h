/* nvme_interrupt.h: how DK's NVMe driver gets its one interrupt: MSI-X
 * vector 0 aimed at DK's core, or the PCI INTx line through the IOAPIC. */
#pragma once
#include <formica/pci.h>

/* Claims the controller's interrupt (before anything touches the device:
 * owning it is what makes DK the controller's only driver). 0 or -E_*. */
long nvme_interrupt_attach(const struct pci_function *function);
/* "msi-x" or "intx" once attached. */
const char *nvme_interrupt_kind(void);
