/* ioapic.h: the IOAPICs' redirection entries. Any core may change an entry
 * (the registers are reached through the direct map); one lock keeps the
 * index/data register pairs consistent. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* True when some IOAPIC has an input pin for `gsi`. */
bool ioapic_has_gsi(uint32_t gsi);
/* Sends `gsi` to `apic_id` on `vector` (fixed delivery, physical destination). */
void ioapic_route(uint32_t gsi, uint8_t vector, uint32_t apic_id, bool level, bool active_low);
void ioapic_set_masked(uint32_t gsi, bool masked);
