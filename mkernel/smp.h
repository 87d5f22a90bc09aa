/* smp.h: bringing up the application processors. The m-kernel starts every
 * core of the MADT with INIT-SIPI-SIPI into the p-kernel and waits, serving
 * their memory requests, until each reports online or a deadline passes. */
#pragma once
#include <stdint.h>

/* Starts cores 1..core_count-1 (records already in kernel_shared->cpus);
 * panics naming the cores that did not answer. */
void smp_start_application_cores(uint64_t pkernel_entry, uint64_t timeout_ms);
