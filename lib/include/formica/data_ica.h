/* data_ica.h: how a server checks that a data ICA it was handed is large
 * enough before touching it: the kernel writes each attached data ICA's
 * size into the control page on arrival. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include <formica/ica.h>

/* True when data ICA number `index` of the control page arrived mapped and
 * holds at least `bytes`. No system call. */
bool data_ica_holds(const struct ica_control *page, uint32_t index, uint64_t bytes);
