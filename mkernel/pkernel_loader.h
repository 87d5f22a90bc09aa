/* pkernel_loader.h: places the p-kernel image (a boot module) in frames of
 * the m-kernel's choosing and maps it at its link address in the shared
 * kernel half, so every AP can run it. */
#pragma once
#include <stdint.h>
#include "boot_information.h"

/* Returns the p-kernel's entry address, or 0 with a message when the module
 * is missing or not a valid p-kernel image. */
uint64_t pkernel_load(const struct boot_information *boot);
