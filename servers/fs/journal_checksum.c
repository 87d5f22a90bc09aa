/* journal_checksum.c: JBD2's checksums. v1 (the compat feature "checksum"):
 * crc32_be, the big-endian CRC-32 (polynomial 0x04C11DB7, no final
 * inversion), over each descriptor block and every logged block as written,
 * started at ~0 per transaction and stored in the commit block. v2/v3: crc32c
 * (Castagnoli, reflected 0x82F63B78, no final inversion) seeded with the
 * journal's UUID, per block (journal superblock, descriptor and revoke tails,
 * commit block, each tag). */
#include "journal.h"

static uint32_t table[256];
static bool table_ready;

static void make_table(void)
{
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte << 24;
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 0x80000000u) ? (crc << 1) ^ 0x04C11DB7u : crc << 1;
        table[byte] = crc;
    }
    table_ready = true;
}

uint32_t journal_crc32_be(uint32_t crc, const void *data, uint32_t length)
{
    if (!table_ready)
        make_table();
    const uint8_t *bytes = data;
    for (uint32_t i = 0; i < length; i++)
        crc = (crc << 8) ^ table[(crc >> 24) ^ bytes[i]];
    return crc;
}

static uint32_t table_c[256];
static bool table_c_ready;

static void make_table_c(void)
{
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte;
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
        table_c[byte] = crc;
    }
    table_c_ready = true;
}

uint32_t journal_crc32c(uint32_t crc, const void *data, uint32_t length)
{
    if (!table_c_ready)
        make_table_c();
    const uint8_t *bytes = data;
    for (uint32_t i = 0; i < length; i++)
        crc = (crc >> 8) ^ table_c[(crc ^ bytes[i]) & 0xff];
    return crc;
}
