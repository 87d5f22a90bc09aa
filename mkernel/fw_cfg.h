/* fw_cfg.h: reading named files from QEMU's firmware configuration device.
 * The runner passes the kernel command line this way for every boot method. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Copies file `name` (NUL-terminated, truncated to size-1) into `buffer`;
 * false when there is no fw_cfg device or no such file. */
bool fw_cfg_read_text(const char *name, char *buffer, size_t size);
