/* msi.c: SYS_IRQ_ATTACH_MSI. Slot s of DEVICE_MSI_SLOTS is interrupt line
 * DEVICE_GSI_LIMIT + s on vector DEVICE_VECTOR_BASE + DEVICE_GSI_LIMIT + s:
 * edge-triggered, so irq.c's handler, irq_wait and irq_release serve it as
 * they serve an IOAPIC line, with nothing to mask. A slot also records the
 * PCI function, which one process at a time may own (the claim on the device). */
#include "msi.h"
#include "console.h"
#include "cpu.h"
#include "device_state.h"
#include "irq.h"
#include "pci_config.h"
#include "shared.h"
#include "spinlock.h"
#include "trap.h"
#include <formica/errors.h>

#define MSI_ADDRESS_BASE 0xfee00000u /* physical destination mode, no redirection hint */
#define PCI_NO_FUNCTION 0xffffu
#define MSI_BROADCAST_ID 255u /* in the address's 8-bit destination field */

static uint32_t function_key(uint64_t bus, uint64_t device, uint64_t function)
{
    return (uint32_t)(bus << 8 | device << 3 | function) + 1; /* 0 = no function */
}

static bool function_owned(const struct device_state *devices, uint32_t key)
{
    for (uint32_t slot = 0; slot < DEVICE_MSI_SLOTS; slot++)
        if (devices->msi_function[slot] == key &&
            devices->lines[DEVICE_GSI_LIMIT + slot].owner_pid != 0)
            return true;
    return false;
}

/* A free slot claimed for `pid` and the function, or -E_BUSY. */
static long claim_slot(struct device_state *devices, uint32_t pid, uint32_t key)
{
    uint64_t flags = spin_lock(&devices->msi_lock);
    long found = -E_BUSY;
    if (!function_owned(devices, key)) {
        for (uint32_t slot = 0; slot < DEVICE_MSI_SLOTS && found < 0; slot++) {
            struct irq_line *line = &devices->lines[DEVICE_GSI_LIMIT + slot];
            if (line->owner_pid == 0) {
                line->owner_pid = pid;
                devices->msi_function[slot] = key;
                found = slot;
            }
        }
    }
    spin_unlock(&devices->msi_lock, flags);
    return found;
}

/* The MSI address names its target in 8 bits (19:12), and 255 there means every
 * core: a core with APIC id 255 or more needs interrupt remapping, which
 * Formica does not set up. Refused with a line saying what to do instead. */
static bool msi_can_reach(const struct cpu *cpu)
{
    if (cpu->apic_id < MSI_BROADCAST_ID)
        return true;
    kprintf("msi: core %u (apic id %u) cannot take MSIs without interrupt remapping; "
            "place the driver on a core with apic id 254 or less\n",
            cpu->index, cpu->apic_id);
    return false;
}

long msi_attach(struct process *process, uint64_t bus, uint64_t device, uint64_t function,
                struct msi_message *message)
{
    struct device_process *record = device_process_of(process);
    if (record == NULL || record->gsi != DEVICE_NO_GSI ||
        !pci_config_address_ok(bus, device, function, 0, 4))
        return -E_INVALID;
    uint32_t ids = pci_config_read((uint32_t)bus, (uint32_t)device, (uint32_t)function, 0, 4);
    if ((ids & 0xffff) == PCI_NO_FUNCTION)
        return -E_INVALID;
    struct cpu *cpu = this_cpu();
    if (!msi_can_reach(cpu))
        return -E_INVALID;
    struct device_state *devices = kernel_shared->devices;
    long slot = claim_slot(devices, process->pid, function_key(bus, device, function));
    if (slot < 0)
        return slot;
    uint32_t index = DEVICE_GSI_LIMIT + (uint32_t)slot;
    struct irq_line *line = &devices->lines[index];
    line->core = cpu->index;
    line->level = false;
    line->pending = 0;
    line->ends_ica_wait = 0;
    record->gsi = (int32_t)index;
    uint8_t vector = (uint8_t)(DEVICE_VECTOR_BASE + index);
    trap_set_handler(vector, irq_device_interrupt);
    message->address = MSI_ADDRESS_BASE | cpu->apic_id << 12;
    message->data = vector; /* fixed delivery, edge */
    message->vector = vector;
    return 0;
}
