/* lapic.c: local APIC access for both kernels. In xAPIC mode registers are
 * 32-bit MMIO words at the shared mapping; in x2APIC mode each register is
 * MSR 0x800 + offset/16 and the ICR is a single 64-bit MSR. */
#include "lapic.h"
#include "shared.h"
#include "trap.h"
#include "x86.h"

#define REGISTER_ID 0x20
#define REGISTER_TASK_PRIORITY 0x80
#define REGISTER_EOI 0xb0
#define REGISTER_SPURIOUS 0xf0
#define REGISTER_ICR_LOW 0x300
#define REGISTER_ICR_HIGH 0x310
#define REGISTER_LVT_TIMER 0x320
#define REGISTER_TIMER_INITIAL 0x380
#define REGISTER_TIMER_CURRENT 0x390
#define REGISTER_TIMER_DIVIDE 0x3e0

#define APIC_BASE_ENABLE (1u << 11)
#define APIC_BASE_X2APIC (1u << 10)
#define ICR_PENDING (1u << 12)
#define ICR_ASSERT (1u << 14)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define LVT_MASKED (1u << 16)
#define LVT_PERIODIC (1u << 17)

static uint32_t lapic_read(uint32_t offset)
{
    if (kernel_shared->x2apic)
        return (uint32_t)rdmsr(0x800 + (offset >> 4));
    return *(volatile uint32_t *)(kernel_shared->lapic_mmio + offset);
}

static void lapic_write(uint32_t offset, uint32_t value)
{
    if (kernel_shared->x2apic)
        wrmsr(0x800 + (offset >> 4), value);
    else
        *(volatile uint32_t *)(kernel_shared->lapic_mmio + offset) = value;
}

int lapic_x2apic_supported(void)
{
    uint32_t regs[4];
    cpuid(1, 0, regs);
    return (regs[2] >> 21) & 1;
}

void lapic_enable(void)
{
    uint64_t base = rdmsr(MSR_APIC_BASE) | APIC_BASE_ENABLE;
    if (kernel_shared->x2apic)
        base |= APIC_BASE_X2APIC;
    wrmsr(MSR_APIC_BASE, base);
    lapic_write(REGISTER_TASK_PRIORITY, 0);
    lapic_write(REGISTER_SPURIOUS, 0x100 | VECTOR_SPURIOUS);
}

uint32_t lapic_id(void)
{
    uint32_t id = lapic_read(REGISTER_ID);
    return kernel_shared->x2apic ? id : id >> 24;
}

void lapic_end_of_interrupt(void)
{
    lapic_write(REGISTER_EOI, 0);
}

static void lapic_send_command(uint32_t apic_id, uint32_t command)
{
    if (kernel_shared->x2apic) {
        wrmsr(0x830, ((uint64_t)apic_id << 32) | command);
        return;
    }
    while (lapic_read(REGISTER_ICR_LOW) & ICR_PENDING)
        cpu_relax();
    lapic_write(REGISTER_ICR_HIGH, apic_id << 24);
    lapic_write(REGISTER_ICR_LOW, command);
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
    lapic_send_command(apic_id, ICR_ASSERT | vector);
}

void lapic_send_init(uint32_t apic_id)
{
    lapic_send_command(apic_id, ICR_INIT | ICR_ASSERT);
}

void lapic_send_startup(uint32_t apic_id, uint8_t page)
{
    lapic_send_command(apic_id, ICR_STARTUP | ICR_ASSERT | page);
}

uint64_t lapic_timer_measure(uint64_t tsc_ticks)
{
    lapic_write(REGISTER_TIMER_DIVIDE, 0x3); /* divide by 16 */
    lapic_write(REGISTER_LVT_TIMER, LVT_MASKED | VECTOR_TIMER);
    lapic_write(REGISTER_TIMER_INITIAL, 0xffffffff);
    uint64_t start = rdtsc();
    while (rdtsc() - start < tsc_ticks)
        cpu_relax();
    uint32_t remaining = lapic_read(REGISTER_TIMER_CURRENT);
    lapic_write(REGISTER_TIMER_INITIAL, 0);
    return 0xffffffffu - remaining;
}

void lapic_timer_start(uint32_t period_ms)
{
    uint64_t count = kernel_shared->lapic_ticks_per_ms * period_ms;
    if (count == 0 || count > 0xffffffffu)
        count = 0xffffffffu;
    lapic_write(REGISTER_TIMER_DIVIDE, 0x3);
    lapic_write(REGISTER_LVT_TIMER, LVT_PERIODIC | VECTOR_TIMER);
    lapic_write(REGISTER_TIMER_INITIAL, (uint32_t)count);
}
