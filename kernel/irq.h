/* irq.h: device interrupts delivered to user-space drivers. A driver owns
 * one line, routed to its own core; the interrupt wakes it from irq_wait.
 * Level-triggered lines stay masked from delivery until the next irq_wait. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "process.h"
#include "trap.h"

/* SYS_IRQ_ATTACH for `process` (the caller, on its own core): the GSI or -E_*. */
long irq_attach(struct process *process, uint64_t line);
/* A line for the kernel itself (the PS/2 keyboard): routed to this core,
 * `handler` on its vector (it sends the EOI); the line's owner is
 * IRQ_OWNER_KERNEL, so a driver's irq_attach of it gets -E_BUSY. */
long irq_attach_kernel(uint64_t line, trap_handler handler);
#define IRQ_OWNER_KERNEL 0xffffffffu
/* SYS_IRQ_WAIT: interrupts counted since the last call (>= 1), or -E_*;
 * 0 when `timeout_ms` (0 = wait for ever) passed without one. */
long irq_wait(struct process *process, uint64_t timeout_ms);
/* ICA_OR_IRQ: unmasks the caller's line (as irq_wait does) and lets its
 * interrupt end the caller's ICA wait. False when it owns no line. */
bool irq_arm_ica_wait(struct process *process);
/* True when an interrupt of the caller's line is counted and not yet taken. */
bool irq_interrupt_pending(struct process *process);
/* Ends ICA_OR_IRQ: the interrupts counted are taken (the driver looks at its
 * rings next), the line no longer ends ICA waits. */
void irq_disarm_ica_wait(struct process *process);
/* The handler of every device vector, IOAPIC line or MSI slot (kernel/msi.c):
 * masks a level line, counts, sends EOI, wakes the owner. */
void irq_device_interrupt(struct trap_frame *frame);
