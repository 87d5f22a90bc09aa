/* requester_core.h: the core a process runs on, as DK needs it to pick the
 * NVMe queue pair of the core a request comes from. */
#pragma once
#include <stdint.h>

/* The core of process `pid` (looked up once, then remembered); DK's own
 * core when the process is not found. */
uint32_t requester_core(uint32_t pid);
