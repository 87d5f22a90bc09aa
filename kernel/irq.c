/* irq.c: SYS_IRQ_ATTACH and SYS_IRQ_WAIT and the interrupt handler behind
 * them. GSI g uses vector DEVICE_VECTOR_BASE + g on the owner's core; the
 * handler masks a level line, counts, sends EOI and wakes the owner. */
#include "irq.h"
#include "atomic.h"
#include "cpu.h"
#include "device_state.h"
#include "ioapic.h"
#include "lapic.h"
#include "scheduler.h"
#include "shared.h"
#include "trap.h"
#include <formica/errors.h>

#define ISA_LINES 16

struct line_mode {
    uint32_t gsi;
    bool level;
    bool active_low;
};

/* ISA IRQs: edge, active high unless the MADT overrides them; GSIs >= 16
 * are PCI: level, active low. */
static struct line_mode resolve_line(uint64_t line)
{
    struct line_mode mode = {.gsi = (uint32_t)line, .level = true, .active_low = true};
    if (line >= ISA_LINES)
        return mode;
    const struct isa_override *override = &kernel_shared->devices->isa[line];
    mode.level = false;
    mode.active_low = false;
    if (override->present) {
        mode.gsi = override->gsi;
        mode.level = (override->flags & OVERRIDE_TRIGGER_MASK) == OVERRIDE_TRIGGER_LEVEL;
        mode.active_low = (override->flags & OVERRIDE_POLARITY_MASK) == OVERRIDE_POLARITY_LOW;
    }
    return mode;
}

void irq_device_interrupt(struct trap_frame *frame)
{
    uint32_t gsi = (uint32_t)frame->vector - DEVICE_VECTOR_BASE; /* or an MSI slot's line */
    struct irq_line *line = &kernel_shared->devices->lines[gsi];
    if (line->level)
        ioapic_set_masked(gsi, true);
    atomic_add(&line->pending, 1);
    lapic_end_of_interrupt();
    this_cpu()->device_interrupts++;
    struct process *owner = process_find(line->owner_pid);
    if (owner != NULL && owner->core == this_cpu()->index && owner->state == PROCESS_WAITING &&
        (owner->wait_reason == WAIT_IRQ ||
         (atomic_load_acquire(&line->ends_ica_wait) &&
          (owner->wait_reason == WAIT_ICA || owner->wait_reason == WAIT_SLEEP))))
        scheduler_wake(owner);
}

/* The line `process` owns, or NULL. */
static struct irq_line *line_of(struct process *process)
{
    struct device_process *record = device_process_of(process);
    if (record == NULL || record->gsi == DEVICE_NO_GSI)
        return NULL;
    return &kernel_shared->devices->lines[record->gsi];
}

bool irq_arm_ica_wait(struct process *process)
{
    struct irq_line *line = line_of(process);
    if (line == NULL)
        return false;
    atomic_store_release(&line->ends_ica_wait, 1);
    if (line->level)
        ioapic_set_masked((uint32_t)device_process_of(process)->gsi, false);
    return true;
}

bool irq_interrupt_pending(struct process *process)
{
    struct irq_line *line = line_of(process);
    return line != NULL && atomic_load_acquire(&line->pending) > 0;
}

void irq_disarm_ica_wait(struct process *process)
{
    struct irq_line *line = line_of(process);
    if (line == NULL)
        return;
    atomic_store_release(&line->ends_ica_wait, 0);
    atomic_swap(&line->pending, 0);
}

long irq_attach(struct process *process, uint64_t line_number)
{
    struct device_process *record = device_process_of(process);
    if (record == NULL || line_number >= DEVICE_GSI_LIMIT)
        return -E_INVALID;
    struct line_mode mode = resolve_line(line_number);
    if (mode.gsi >= DEVICE_GSI_LIMIT || !ioapic_has_gsi(mode.gsi) || record->gsi != DEVICE_NO_GSI)
        return -E_INVALID;
    struct cpu *cpu = this_cpu();
    if (cpu->apic_id > 254) { /* IOAPIC destinations: 8 bits, 255 = all, without remapping */
        kprintf("irq: core %u (apic id %u) cannot take device interrupts without interrupt "
                "remapping; place the driver on a core with apic id 254 or less\n",
                cpu->index, cpu->apic_id);
        return -E_INVALID;
    }
    struct irq_line *line = &kernel_shared->devices->lines[mode.gsi];
    uint32_t free_owner = 0;
    if (!atomic_compare_swap(&line->owner_pid, &free_owner, process->pid))
        return -E_BUSY;
    line->core = cpu->index;
    line->level = mode.level;
    line->pending = 0;
    line->ends_ica_wait = 0;
    record->gsi = (int32_t)mode.gsi;
    uint8_t vector = (uint8_t)(DEVICE_VECTOR_BASE + mode.gsi);
    trap_set_handler(vector, irq_device_interrupt);
    ioapic_route(mode.gsi, vector, cpu->apic_id, mode.level, mode.active_low);
    return mode.gsi;
}

long irq_attach_kernel(uint64_t line_number, trap_handler handler)
{
    struct line_mode mode = resolve_line(line_number);
    if (kernel_shared->devices == NULL || mode.gsi >= DEVICE_GSI_LIMIT || !ioapic_has_gsi(mode.gsi))
        return -E_INVALID;
    struct irq_line *line = &kernel_shared->devices->lines[mode.gsi];
    uint32_t free_owner = 0;
    if (!atomic_compare_swap(&line->owner_pid, &free_owner, IRQ_OWNER_KERNEL))
        return -E_BUSY;
    struct cpu *cpu = this_cpu();
    line->core = cpu->index;
    line->level = mode.level;
    uint8_t vector = (uint8_t)(DEVICE_VECTOR_BASE + mode.gsi);
    trap_set_handler(vector, handler);
    ioapic_route(mode.gsi, vector, cpu->apic_id, mode.level, mode.active_low);
    return mode.gsi;
}

/* The core tick after `milliseconds` (> 0) from now; 0 (no deadline) for 0. */
static uint64_t deadline_tick(uint64_t milliseconds)
{
    if (milliseconds == 0)
        return 0;
    uint64_t period = kernel_shared->tick_period_ms;
    uint64_t ticks = (milliseconds + period - 1) / period;
    return this_cpu()->timer_ticks + (ticks > 0 ? ticks : 1);
}

long irq_wait(struct process *process, uint64_t timeout_ms)
{
    struct device_process *record = device_process_of(process);
    if (record == NULL || record->gsi == DEVICE_NO_GSI)
        return -E_INVALID;
    struct irq_line *line = &kernel_shared->devices->lines[record->gsi];
    if (line->level)
        ioapic_set_masked((uint32_t)record->gsi, false);
    uint64_t wake_tick = deadline_tick(timeout_ms);
    for (;;) {
        uint32_t count = atomic_swap(&line->pending, 0);
        if (count > 0)
            return count;
        if (wake_tick != 0 && this_cpu()->timer_ticks >= wake_tick)
            return 0; /* timed out */
        scheduler_block(WAIT_IRQ, wake_tick);
        if (process->kill_requested)
            scheduler_exit_current(-1);
    }
}
