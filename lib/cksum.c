/* cksum.c: POSIX cksum's CRC-32 (not zlib's: no reflection, initial value
 * 0, the length appended least significant byte first, then inverted),
 * table-driven with the table built on first use. */
#include <formica/cksum.h>
#include <stdbool.h>

#define CKSUM_POLYNOMIAL 0x04C11DB7u

static uint32_t table[256];
static bool table_ready;

static void build_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t crc = i << 24;
        for (int bit = 0; bit < 8; bit++)
            crc = (crc & 0x80000000u) ? (crc << 1) ^ CKSUM_POLYNOMIAL : crc << 1;
        table[i] = crc;
    }
    table_ready = true;
}

static uint32_t add_byte(uint32_t crc, uint8_t byte)
{
    return (crc << 8) ^ table[(crc >> 24) ^ byte];
}

void cksum_begin(struct cksum_state *state)
{
    if (!table_ready)
        build_table();
    state->crc = 0;
    state->length = 0;
}

void cksum_add(struct cksum_state *state, const void *data, size_t length)
{
    const uint8_t *bytes = data;
    for (size_t i = 0; i < length; i++)
        state->crc = add_byte(state->crc, bytes[i]);
    state->length += length;
}

uint32_t cksum_end(const struct cksum_state *state)
{
    uint32_t crc = state->crc;
    for (uint64_t length = state->length; length != 0; length >>= 8)
        crc = add_byte(crc, (uint8_t)length);
    return ~crc;
}
