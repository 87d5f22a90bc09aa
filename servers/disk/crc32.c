/* crc32.c: the CRC-32 of zlib and Ethernet (reflected polynomial
 * 0xedb88320), bit by bit: the self-test checksums 1 MiB once, so a table
 * buys nothing. */
#include "crc32.h"

uint32_t crc32_update(uint32_t crc, const void *data, uint64_t length)
{
    const uint8_t *bytes = data;
    crc = ~crc;
    for (uint64_t i = 0; i < length; i++) {
        crc ^= bytes[i];
        for (int bit = 0; bit < 8; bit++)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
    }
    return ~crc;
}
