/* lapic_boot.c: the local APIC at boot, on the m-kernel's core only: its
 * identity, INIT-SIPI to start the application processors
 * and the one-off timer measurement behind clock calibration. */
#include "lapic_boot.h"
#include "lapic_registers.h"
#include "trap.h"
#include "x86.h"

uint32_t lapic_id(void)
{
    uint32_t id = lapic_read(LAPIC_REGISTER_ID);
    return kernel_shared->x2apic ? id : id >> 24;
}

void lapic_send_init(uint32_t apic_id)
{
    lapic_send_command(apic_id, LAPIC_ICR_INIT | LAPIC_ICR_ASSERT);
}

void lapic_send_startup(uint32_t apic_id, uint8_t page)
{
    lapic_send_command(apic_id, LAPIC_ICR_STARTUP | LAPIC_ICR_ASSERT | page);
}

uint64_t lapic_timer_measure(uint64_t tsc_ticks)
{
    lapic_write(LAPIC_REGISTER_TIMER_DIVIDE, LAPIC_TIMER_DIVIDE_BY_16);
    lapic_write(LAPIC_REGISTER_LVT_TIMER, LAPIC_LVT_MASKED | VECTOR_TIMER);
    lapic_write(LAPIC_REGISTER_TIMER_INITIAL, 0xffffffff);
    uint64_t start = rdtsc();
    while (rdtsc() - start < tsc_ticks)
        cpu_relax();
    uint32_t remaining = lapic_read(LAPIC_REGISTER_TIMER_CURRENT);
    lapic_write(LAPIC_REGISTER_TIMER_INITIAL, 0);
    return 0xffffffffu - remaining;
}
