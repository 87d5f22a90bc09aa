/* kept_region.h: a server's kept region: memory the m-kernel keeps under a
 * server's name while the server is restarted, handed to the next process
 * that asks for that name (SYS_KEPT_REGION). A header says whose and which
 * layout it is; the library checks it (magic, version, size, checksum)
 * before a restarted server trusts what it finds (docs/recovery.md). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEPT_REGION_BASE 0x0000530000000000ull /* where it is mapped */
#define KEPT_REGION_MAX_BYTES (16ull << 20)
/* Names the m-kernel keeps a region for: the lone servers', and one per
 * instance of two servers on every core (NAME.i, formica/instance.h). */
#define KEPT_REGIONS (8 + 2 * 64)
#define KEPT_NAME_BYTES 16 /* = SERVER_NAME_BYTES */

/* The first bytes of a kept region; the user's layout follows. */
struct kept_header {
    uint64_t magic;   /* the user's, e.g. "BLKJRNL1" */
    uint32_t version; /* of the user's layout */
    uint32_t reserved;
    uint64_t bytes;    /* the whole region */
    uint64_t starts;   /* how many processes have opened it */
    uint64_t checksum; /* of the fields above */
};

/* One word's turn of kept_checksum: word `index` of the bytes, `word`,
 * taken into the sum so far. */
static inline uint64_t kept_checksum_step(uint64_t sum, uint64_t word, size_t index)
{
    sum ^= word + index;
    return (sum << 23 | sum >> 41) * 0x9E3779B97F4A7C15ull;
}
/* A 64-bit checksum of `bytes` bytes (a multiple of 8), cheap enough to
 * guard every 4 KiB block written into a kept region. */
static inline uint64_t kept_checksum(const void *data, size_t bytes)
{
    const uint64_t *words = data;
    uint64_t sum = bytes;
    for (size_t i = 0; i < bytes / 8; i++)
        sum = kept_checksum_step(sum, words[i], i);
    return sum;
}
/* kept_copy_checksummed's last word when `bytes` is not a multiple of 8
 * (apart: a small write's patch is whole words). */
uint64_t kept_copy_checksummed_tail(uint8_t *to, const uint8_t *from, size_t bytes, uint64_t sum);
/* kept_copy_checksummed's turn for word `index`: copied, then taken into
 * `sum`. */
static inline uint64_t kept_copy_word(uint8_t *to, const uint8_t *from, size_t index, uint64_t sum)
{
    uint64_t word;
    __builtin_memcpy(&word, from + index * 8, 8);
    __builtin_memcpy(to + index * 8, &word, 8);
    return kept_checksum_step(sum, word, index);
}
/* Copies `bytes` bytes from `from` to `to` (not overlapping; `to` has room
 * for whole words) and returns kept_checksum of `to`'s whole words that hold
 * them (`bytes` rounded up to 8; the last word's bytes past `bytes` count as
 * `to` holds them), in one pass: the copy reads no byte of `from` past
 * `bytes`. Inline: a small write's patch is two words, without the loop. */
static inline uint64_t kept_copy_checksummed(void *to, const void *from, size_t bytes)
{
    uint8_t *out = to;
    const uint8_t *in = from;
    if (bytes == 16)
        return kept_copy_word(out, in, 1, kept_copy_word(out, in, 0, 16));
    uint64_t sum = (bytes + 7) & ~(size_t)7;
    for (size_t i = 0; i < bytes / 8; i++)
        sum = kept_copy_word(out, in, i, sum);
    if (bytes % 8 != 0)
        sum = kept_copy_checksummed_tail(out, in, bytes, sum);
    return sum;
}
/* True when `header` is a valid header of `bytes` with `magic` and `version`. */
bool kept_header_valid(const struct kept_header *header, uint64_t magic, uint32_t version,
                       uint64_t bytes);
/* Makes `header` a fresh header (the rest of the region is the caller's). */
void kept_header_init(struct kept_header *header, uint64_t magic, uint32_t version, uint64_t bytes);
/* Counts one more process opening the region (header->starts). */
void kept_header_count_start(struct kept_header *header);
/* Maps the caller's kept region for `name` (SYS_KEPT_REGION) and checks it:
 * *restored is true when it held a valid header of this magic and version
 * (a restart), false when it was new or invalid (then it is zeroed and given
 * a fresh header). Returns the region, or NULL with *error set. */
void *kept_region_open(const char *name, uint64_t bytes, uint64_t magic, uint32_t version,
                       bool *restored, long *error);
