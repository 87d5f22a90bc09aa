/* selftest.h: the boot-time all-pairs check of the inter-core area
 * (command-line option selftest=intercore[:ROUNDS]): every core sends ROUNDS
 * numbered messages to every other core; counts and order are verified. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* On a p-kernel core: runs the sending phase if the m-kernel asked for it. */
void selftest_run_pending(void);
/* On the m-kernel: drives the whole test, prints its @json line; true if it passed. */
bool selftest_intercore(uint32_t rounds);
