/* swap_size.h: the size of the disk backend's swap file, from the kernel
 * option pager_swap_mib=N (MiB, decimal). Pure: host-tested. */
#pragma once
#include <stdint.h>

#define SWAP_DEFAULT_MIB 40u /* the default disk image is 64 MiB */
#define SWAP_MOST_MIB 4096u  /* the free-unit bitmap is then 128 KiB */

/* 0 and `*mib` set when `text` is a decimal number of MiB in
 * 1..SWAP_MOST_MIB; -E_INVALID when it is not a number or is zero,
 * -E_TOO_BIG past SWAP_MOST_MIB (`*mib` untouched). */
long swap_size_parse(const char *text, uint32_t *mib);
