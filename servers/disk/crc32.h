/* crc32.h: zlib's CRC-32, so the host can check what DK read
 * (zlib.crc32 in Python gives the same value). Start with crc = 0. */
#pragma once
#include <stdint.h>

uint32_t crc32_update(uint32_t crc, const void *data, uint64_t length);
