/* device_setup.h: at boot, the m-kernel builds the device state both kernels
 * share (kernel/device_state.h) from the MADT: IOAPICs with their pin
 * counts, ISA overrides; every IOAPIC pin starts masked. */
#pragma once
#include "madt.h"

void device_setup(const struct madt_info *madt);
