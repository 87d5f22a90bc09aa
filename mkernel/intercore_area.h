/* intercore_area.h: the m-kernel lays out the N×N inter-core area once at
 * boot (kernel/intercore.h sends and receives over it on every core). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "intercore.h"

/* Bytes the area for `core_count` cores occupies. */
size_t intercore_area_bytes(uint32_t core_count);
/* Empty rings in every entry (from, to), each 64-byte aligned. */
void intercore_area_init(struct intercore_area *area, uint32_t core_count);
