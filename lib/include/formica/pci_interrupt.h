/* pci_interrupt.h: a PCI function's interrupt for its driver, the best of
 * the kinds the driver takes: MSI-X (table entry 0), else MSI, else its
 * INTx line through the IOAPIC. Each is delivered to the caller's core;
 * irq_wait counts them. The one way every driver attaches one. */
#pragma once
#include <formica/pci.h>

enum pci_interrupt_kind {
    PCI_INTERRUPT_NONE,
    PCI_INTERRUPT_INTX,
    PCI_INTERRUPT_MSI,
    PCI_INTERRUPT_MSIX,
};

/* Which kinds a driver takes (a device whose MSI-X needs more than table
 * entry 0, as the e1000e's cause routing does, leaves it out). */
#define PCI_INTERRUPT_TAKES_INTX (1u << PCI_INTERRUPT_INTX)
#define PCI_INTERRUPT_TAKES_MSI (1u << PCI_INTERRUPT_MSI)
#define PCI_INTERRUPT_TAKES_MSIX (1u << PCI_INTERRUPT_MSIX)
#define PCI_INTERRUPT_TAKES_ANY                                                                    \
    (PCI_INTERRUPT_TAKES_INTX | PCI_INTERRUPT_TAKES_MSI | PCI_INTERRUPT_TAKES_MSIX)

/* Attaches the best interrupt of `takes` and returns its kind; -E_BUSY when
 * the function's message vector belongs to another process (it drives the
 * device); PCI_INTERRUPT_NONE, with a line beginning with `driver` saying
 * why, when none can be had: the driver then polls, or gives up. */
long pci_interrupt_attach(const struct pci_function *function, const char *driver, unsigned takes);
/* "msi-x", "msi", "intx" or "none". */
const char *pci_interrupt_name(enum pci_interrupt_kind kind);
