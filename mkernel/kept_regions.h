/* kept_regions.h: the m-kernel's kept regions (kept_regions.c). */
#pragma once
#include <stdint.h>

/* Maps the kept region of `name` ( `bytes` long) into process `pid`,
 * allocating it the first time; its user address or an -E_* code. */
long kept_region_map(const char *name, uint32_t pid, uint64_t bytes);
