/* selftest.h: `dk --selftest`: reads the start of the disk and reports its
 * CRC-32, writes and re-reads a pattern near the end, and checks that bad
 * requests end in errors, not hangs. One @json "dkcheck" line. */
#pragma once
#include "disk_drivers.h"

/* 0 when every check passed, else 1. */
int disk_selftest(struct block_device *device, uint64_t sectors_to_read);
