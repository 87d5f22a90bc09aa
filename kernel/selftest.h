/* selftest.h: the boot-time all-pairs check of the inter-core area
 * (command-line option selftest=intercore[:ROUNDS]): every core sends ROUNDS
 * numbered messages to every other core; counts and order are verified. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Registers the message handlers; every core's kernel calls it at start. */
void selftest_install(void);
/* On a p-kernel core: runs the sending phase if the m-kernel asked for it. */
void selftest_run_pending(void);
/* On the m-kernel: drives the whole test, prints its @json line; true if it passed.
 * `counters`: core_count² zeroed words in memory every core reaches (the m-kernel's). */
bool selftest_intercore(uint32_t rounds, uint32_t *counters);
