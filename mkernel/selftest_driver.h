/* selftest_driver.h: the m-kernel's side of the inter-core self-test
 * (kernel/selftest.h): it starts every core, collects their counts and
 * prints the verdict. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Drives the whole test, prints its @json line; true if it passed. */
bool selftest_intercore(uint32_t rounds);
