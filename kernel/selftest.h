/* selftest.h: the boot-time all-pairs check of the inter-core area
 * (command-line option selftest=intercore[:ROUNDS]): every core sends ROUNDS
 * numbered messages to every other core; counts and order are verified.
 * This is every core's part; the m-kernel drives it (mkernel/selftest_driver.h). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* On a p-kernel core: runs the sending phase if the m-kernel asked for it. */
void selftest_run_pending(void);
/* Sends ROUNDS pings to every other core, interleaved so all pairs progress. */
uint64_t selftest_send_all(uint32_t rounds);
/* Waits until ROUNDS pings from every other core have reached this core. */
void selftest_wait_for_pings(uint32_t rounds);
/* Pings core `core` has received, and how many of them came out of order. */
uint64_t selftest_received(uint32_t core);
uint64_t selftest_out_of_order(uint32_t core);
