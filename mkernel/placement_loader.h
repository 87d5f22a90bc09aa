/* placement_loader.h: chooses the placement in effect at boot, from the
 * command line (placement=N: preset N from the boot image; placement=file:
 * the text the runner passed through fw_cfg) or the safe default. */
#pragma once

/* Fills kernel_shared->placement; every problem is logged with its line. */
void placement_load(void);
