/* topology.h: which socket (package) the calling core belongs to, from its
 * own CPUID topology leaves; used by placements that name "the other socket". */
#pragma once
#include <stdint.h>

uint32_t topology_socket_of_this_core(void);
