/* pci_interrupt.h: a PCI function's interrupt for its driver, the best it
 * has: MSI-X (table entry 0), else MSI, else its INTx line through the
 * IOAPIC. Each is delivered to the caller's core; irq_wait counts them. */
#pragma once
#include <formica/pci.h>

enum pci_interrupt_kind {
    PCI_INTERRUPT_NONE,
    PCI_INTERRUPT_INTX,
    PCI_INTERRUPT_MSI,
    PCI_INTERRUPT_MSIX,
};

/* Attaches the function's interrupt; PCI_INTERRUPT_NONE (with a line
 * naming `driver`) when none can be had: the driver then polls. */
enum pci_interrupt_kind pci_interrupt_attach(const struct pci_function *function,
                                             const char *driver);
/* "msi-x", "msi", "intx" or "none". */
const char *pci_interrupt_name(enum pci_interrupt_kind kind);
