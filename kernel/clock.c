/* clock.c: time on every core: cycles to microseconds from the calibrated
 * TSC rate, and the periodic LAPIC tick. The boot core's calibration is
 * mkernel/clock_calibration.c. */
#include "clock.h"
#include "cpu.h"
#include "lapic.h"
#include "shared.h"
#include "trap.h"

uint64_t clock_cycles_to_us(uint64_t cycles)
{
    return cycles / (kernel_shared->tsc_hz / 1000000);
}

static void timer_tick(struct trap_frame *frame)
{
    (void)frame;
    this_cpu()->timer_ticks++;
    lapic_end_of_interrupt();
}

void clock_start_tick(uint32_t period_ms)
{
    trap_set_handler(VECTOR_TIMER, timer_tick);
    lapic_timer_start(period_ms);
}
