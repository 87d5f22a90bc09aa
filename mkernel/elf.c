/* elf.c: ELF64 validation. The header, the program header table and each
 * PT_LOAD segment are bounds-checked; the entry must fall inside an
 * executable segment; at most 16 loadable segments are accepted. */
#include "elf.h"
#include <string.h>

struct elf_header {
    uint8_t identity[16];
    uint16_t type;
    uint16_t machine;
    uint32_t version;
    uint64_t entry;
    uint64_t program_headers;
    uint64_t section_headers;
    uint32_t flags;
    uint16_t header_bytes;
    uint16_t program_header_bytes;
    uint16_t program_header_count;
    uint16_t section_header_bytes;
    uint16_t section_header_count;
    uint16_t section_names;
};

struct elf_program_header {
    uint32_t type;
    uint32_t flags;
    uint64_t offset;
    uint64_t virtual_address;
    uint64_t physical_address;
    uint64_t file_bytes;
    uint64_t memory_bytes;
    uint64_t align;
};

#define PT_LOAD 1
#define ET_EXEC 2
#define EM_X86_64 62

static int check_header(const struct elf_header *header, size_t file_bytes)
{
    if (memcmp(header->identity,
               "\x7f"
               "ELF",
               4) != 0)
        return ELF_ERROR_MAGIC;
    if (header->identity[4] != 2 || header->identity[5] != 1 || header->machine != EM_X86_64)
        return ELF_ERROR_CLASS;
    if (header->type != ET_EXEC)
        return ELF_ERROR_TYPE;
    uint64_t table_bytes =
        (uint64_t)header->program_header_count * sizeof(struct elf_program_header);
    if (header->program_header_bytes != sizeof(struct elf_program_header) ||
        header->program_headers > file_bytes || table_bytes > file_bytes - header->program_headers)
        return ELF_ERROR_HEADERS;
    return ELF_OK;
}

static int add_segment(const struct elf_program_header *program, size_t file_bytes, uint64_t lowest,
                       uint64_t highest, struct elf_image *image)
{
    if (program->file_bytes > program->memory_bytes || program->offset > file_bytes ||
        program->file_bytes > file_bytes - program->offset)
        return ELF_ERROR_SEGMENT;
    uint64_t end = program->virtual_address + program->memory_bytes;
    if (end < program->virtual_address || program->virtual_address < lowest || end > highest)
        return ELF_ERROR_ADDRESS;
    if (image->segment_count == sizeof(image->segments) / sizeof(image->segments[0]))
        return ELF_ERROR_SEGMENT;
    image->segments[image->segment_count++] = (struct elf_segment){
        .virtual_address = program->virtual_address,
        .file_offset = program->offset,
        .file_bytes = program->file_bytes,
        .memory_bytes = program->memory_bytes,
        .flags = program->flags & 7u,
    };
    return ELF_OK;
}

static int entry_is_executable(const struct elf_image *image)
{
    for (uint16_t i = 0; i < image->segment_count; i++) {
        const struct elf_segment *segment = &image->segments[i];
        if ((segment->flags & ELF_SEGMENT_EXECUTE) && image->entry >= segment->virtual_address &&
            image->entry < segment->virtual_address + segment->memory_bytes)
            return 1;
    }
    return 0;
}

int elf_read(const void *file, size_t file_bytes, uint64_t lowest, uint64_t highest,
             struct elf_image *image)
{
    memset(image, 0, sizeof(*image));
    if (file_bytes < sizeof(struct elf_header))
        return ELF_ERROR_TOO_SHORT;
    struct elf_header header;
    memcpy(&header, file, sizeof(header));
    int error = check_header(&header, file_bytes);
    if (error != ELF_OK)
        return error;
    image->file = file;
    image->file_bytes = file_bytes;
    image->entry = header.entry;
    for (uint16_t i = 0; i < header.program_header_count; i++) {
        struct elf_program_header program;
        memcpy(&program, (const uint8_t *)file + header.program_headers + i * sizeof(program),
               sizeof(program));
        if (program.type != PT_LOAD || program.memory_bytes == 0)
            continue;
        error = add_segment(&program, file_bytes, lowest, highest, image);
        if (error != ELF_OK)
            return error;
    }
    if (image->segment_count == 0)
        return ELF_ERROR_NO_SEGMENTS;
    return entry_is_executable(image) ? ELF_OK : ELF_ERROR_ENTRY;
}

const char *elf_error_text(int error)
{
    static const char *const texts[] = {
        "ok",
        "file too short",
        "bad magic",
        "not ELF64 little-endian x86-64",
        "not an executable",
        "program headers out of the file",
        "segment out of the file",
        "segment address out of range",
        "no loadable segment",
        "entry outside code",
    };
    if (error > 0 || error < ELF_ERROR_ENTRY)
        return "unknown error";
    return texts[-error];
}
