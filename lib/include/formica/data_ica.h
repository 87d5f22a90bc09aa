/* data_ica.h: how a server checks that a data ICA it was handed is large
 * enough before touching it (the kernel does not tell ICA sizes yet). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* True when the first `bytes` of the data ICA `id` (held by the caller) are
 * mapped. Costs one system call. */
bool data_ica_holds(uint64_t id, uint64_t bytes);
