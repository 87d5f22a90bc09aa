/* elf.h: checking and reading ELF64 x86-64 executables (the p-kernel image,
 * later the user programs). Every offset and size is checked against the
 * file before use; a bad file gives an error code. Pure, tested on the host. */
#pragma once
#include <stddef.h>
#include <stdint.h>

enum elf_error {
    ELF_OK = 0,
    ELF_ERROR_TOO_SHORT = -1,
    ELF_ERROR_MAGIC = -2,
    ELF_ERROR_CLASS = -3,   /* not 64-bit little-endian x86-64 */
    ELF_ERROR_TYPE = -4,    /* not an executable */
    ELF_ERROR_HEADERS = -5, /* program header table out of the file */
    ELF_ERROR_SEGMENT = -6, /* a segment's bytes out of the file, or filesz > memsz */
    ELF_ERROR_ADDRESS = -7, /* a segment wraps or leaves the allowed range */
    ELF_ERROR_NO_SEGMENTS = -8,
    ELF_ERROR_ENTRY = -9, /* entry point outside every executable segment */
};

#define ELF_SEGMENT_EXECUTE 1u
#define ELF_SEGMENT_WRITE 2u
#define ELF_SEGMENT_READ 4u

struct elf_segment {
    uint64_t virtual_address;
    uint64_t file_offset;
    uint64_t file_bytes;
    uint64_t memory_bytes;
    uint32_t flags; /* ELF_SEGMENT_* */
};

struct elf_image {
    const uint8_t *file;
    size_t file_bytes;
    uint64_t entry;
    uint16_t segment_count; /* loadable segments */
    struct elf_segment segments[16];
};

/* Checks `file` and collects its loadable segments, which must all lie in
 * [lowest, highest). */
int elf_read(const void *file, size_t file_bytes, uint64_t lowest, uint64_t highest,
             struct elf_image *image);
const char *elf_error_text(int error);
