/* kernel_counts.h: the kernel's own counters over a phase of memseq (address-space switches,
 * device interrupts, system calls on every core; the pager's times on a core), to see what a
 * swap-in costs besides its time. */
#pragma once
#include <stdint.h>

struct kernel_counts {
    uint64_t cr3_writes, device_interrupts, system_calls, pager_runs;
    uint64_t idle_cycles; /* of memseq's own core */
    uint64_t pager_cycles, own_cycles;
};

void kernel_counts_read(struct kernel_counts *counts);
/* Prints `after - before` as JSON fields (",\"cr3_writes\":N,..."). */
void kernel_counts_print(const struct kernel_counts *before, const struct kernel_counts *after);
