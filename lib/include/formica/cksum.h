/* cksum.h: the CRC of POSIX cksum (polynomial 0x04C11DB7, most significant
 * bit first, the length appended, the result inverted), fed piece by piece,
 * so `cksum` in the shell prints what the host's cksum prints. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct cksum_state {
    uint32_t crc;
    uint64_t length;
};

void cksum_begin(struct cksum_state *state);
void cksum_add(struct cksum_state *state, const void *data, size_t length);
/* The final CRC (after the length bytes). */
uint32_t cksum_end(const struct cksum_state *state);
