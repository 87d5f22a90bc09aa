/* published_regions.h: the m-kernel's published regions (published_regions.c). */
#pragma once
#include <stdint.h>

/* Maps the published region of `name` (`bytes` long) into process `pid`,
 * one of the name's registered instances, allocating it the first time;
 * its user address or an -E_* code (formica/published_region.h). */
long published_region_map(const char *name, uint32_t pid, uint64_t bytes);
/* Process `pid` has ended (its address space is gone): it no longer holds
 * a region; a region nobody holds is freed. */
void published_regions_release(uint32_t pid);
