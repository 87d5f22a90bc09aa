/* lapic.c: what every kernel does with its own local APIC: switch it on,
 * end an interrupt, send an IPI, run the periodic timer. Start-up IPIs,
 * identity and timer calibration are the m-kernel's (mkernel/lapic_boot.c). */
#include "lapic.h"
#include "lapic_registers.h"
#include "shared.h"
#include "trap.h"
#include "x86.h"

#define APIC_BASE_ENABLE (1u << 11)
#define APIC_BASE_X2APIC (1u << 10)

void lapic_enable(void)
{
    uint64_t base = rdmsr(MSR_APIC_BASE) | APIC_BASE_ENABLE;
    if (kernel_shared->x2apic)
        base |= APIC_BASE_X2APIC;
    wrmsr(MSR_APIC_BASE, base);
    lapic_write(LAPIC_REGISTER_TASK_PRIORITY, 0);
    lapic_write(LAPIC_REGISTER_SPURIOUS, 0x100 | VECTOR_SPURIOUS);
}

void lapic_end_of_interrupt(void)
{
    lapic_write(LAPIC_REGISTER_EOI, 0);
}

void lapic_send_command(uint32_t apic_id, uint32_t command)
{
    if (kernel_shared->x2apic) {
        wrmsr(0x830, ((uint64_t)apic_id << 32) | command);
        return;
    }
    while (lapic_read(LAPIC_REGISTER_ICR_LOW) & LAPIC_ICR_PENDING)
        cpu_relax();
    lapic_write(LAPIC_REGISTER_ICR_HIGH, apic_id << 24);
    lapic_write(LAPIC_REGISTER_ICR_LOW, command);
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
    lapic_send_command(apic_id, LAPIC_ICR_ASSERT | vector);
}

void lapic_timer_start(uint32_t period_ms)
{
    uint64_t count = kernel_shared->lapic_ticks_per_ms * period_ms;
    if (count == 0 || count > 0xffffffffu)
        count = 0xffffffffu;
    lapic_write(LAPIC_REGISTER_TIMER_DIVIDE, LAPIC_TIMER_DIVIDE_BY_16);
    lapic_write(LAPIC_REGISTER_LVT_TIMER, LAPIC_LVT_PERIODIC | VECTOR_TIMER);
    lapic_write(LAPIC_REGISTER_TIMER_INITIAL, (uint32_t)count);
}
