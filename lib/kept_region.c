/* kept_region.c: checking a server's kept region (formica/kept_region.h):
 * the kernel keeps the frames; whether their contents can be trusted is
 * decided here, by the header and checksums. Host-testable. */
#include <formica/kept_region.h>
#include <string.h>

static uint64_t header_checksum(const struct kept_header *header)
{
    return kept_checksum(header, offsetof(struct kept_header, checksum));
}

uint64_t kept_copy_checksummed_tail(uint8_t *to, const uint8_t *from, size_t bytes, uint64_t sum)
{
    size_t whole = bytes & ~(size_t)7;
    uint64_t word;
    memcpy(&word, to + whole, 8);           /* the bytes past `bytes` as they stand */
    memcpy(&word, from + whole, bytes % 8); /* the copied ones over them */
    memcpy(to + whole, &word, 8);
    return kept_checksum_step(sum, word, whole / 8);
}

bool kept_header_valid(const struct kept_header *header, uint64_t magic, uint32_t version,
                       uint64_t bytes)
{
    return header->magic == magic && header->version == version && header->bytes == bytes &&
           header->checksum == header_checksum(header);
}

void kept_header_init(struct kept_header *header, uint64_t magic, uint32_t version, uint64_t bytes)
{
    memset(header, 0, sizeof *header);
    header->magic = magic;
    header->version = version;
    header->bytes = bytes;
    header->checksum = header_checksum(header);
}

void kept_header_count_start(struct kept_header *header)
{
    header->starts++;
    header->checksum = header_checksum(header);
}
