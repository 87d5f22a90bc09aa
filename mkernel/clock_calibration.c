/* clock_calibration.c: TSC and LAPIC timer calibration on the boot core.
 * The PIT's channel 2 counts a known interval (its gate is the speaker port
 * 0x61, so no interrupt is needed); a bounded wait means a machine without
 * a PIT cannot hang here. */
#include "clock_calibration.h"
#include "console.h"
#include "lapic_boot.h"
#include "shared.h"
#include "x86.h"

#define PIT_HZ 1193182
#define CALIBRATION_MS 20

static uint64_t tsc_hz_from_cpuid(void)
{
    uint32_t regs[4];
    cpuid(0, 0, regs);
    if (regs[0] < 0x15)
        return 0;
    cpuid(0x15, 0, regs);
    if (regs[0] == 0 || regs[1] == 0 || regs[2] == 0)
        return 0;
    return (uint64_t)regs[2] * regs[1] / regs[0];
}

/* TSC ticks during CALIBRATION_MS measured by PIT channel 2; 0 if it never ends. */
static uint64_t tsc_hz_from_pit(void)
{
    uint32_t count = PIT_HZ * CALIBRATION_MS / 1000;
    port_out8(0x61, (port_in8(0x61) & ~0x02) | 0x01); /* gate on, speaker off */
    port_out8(0x43, 0xb0);                            /* channel 2, lo/hi byte, mode 0 */
    port_out8(0x42, count & 0xff);
    port_out8(0x42, count >> 8);
    uint64_t start = rdtsc();
    for (uint64_t spins = 0; (port_in8(0x61) & 0x20) == 0; spins++)
        if (spins > 100000000)
            return 0;
    uint64_t elapsed = rdtsc() - start;
    return elapsed * 1000 / CALIBRATION_MS;
}

void clock_calibrate(void)
{
    uint64_t hz = tsc_hz_from_cpuid();
    kernel_shared->tsc_source = "cpuid-15h";
    if (hz == 0) {
        hz = tsc_hz_from_pit();
        kernel_shared->tsc_source = "pit";
    }
    if (hz == 0) {
        hz = 1000000000ull;
        kernel_shared->tsc_source = "assumed-1GHz";
        kprintf("clock: no PIT and no CPUID 15h; assuming a 1 GHz TSC\n");
    }
    kernel_shared->tsc_hz = hz;
    uint64_t ticks = lapic_timer_measure(hz * CALIBRATION_MS / 1000);
    kernel_shared->lapic_ticks_per_ms = ticks / CALIBRATION_MS;
}

void clock_delay_us(uint64_t microseconds)
{
    uint64_t cycles = kernel_shared->tsc_hz / 1000000 * microseconds;
    uint64_t start = rdtsc();
    while (rdtsc() - start < cycles)
        cpu_relax();
}
