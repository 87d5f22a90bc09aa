/* program_loader.c: ELF64 user programs. Segments are checked by elf_read
 * to lie in user space; each gets fresh zeroed pages with the file bytes
 * copied in, writable only when the segment is (text and read-only data are
 * not). The stack top holds the argument strings and the argv array. */
#include "program_loader.h"
#include "address_space.h"
#include "console.h"
#include "elf.h"
#include "layout.h"
#include "paging.h"
#include "process.h"
#include <formica/errors.h>
#include <stdbool.h>
#include <string.h>

#define MAX_ARGUMENTS 32

static long load_segment(uint64_t root, const struct elf_image *image,
                         const struct elf_segment *segment, uint64_t *bytes)
{
    uint64_t first = segment->virtual_address & ~(uint64_t)(PAGE_SIZE - 1);
    uint64_t end = (segment->virtual_address + segment->memory_bytes + PAGE_SIZE - 1) &
                   ~(uint64_t)(PAGE_SIZE - 1);
    bool writable = (segment->flags & ELF_SEGMENT_WRITE) != 0;
    /* Pages shared with an earlier segment are already mapped: map only new
     * ones, and make a shared page writable when either segment is. */
    for (uint64_t page = first; page < end; page += PAGE_SIZE) {
        uint64_t *entry = paging_find_entry(root, page);
        if (entry != NULL && (*entry & PAGE_PRESENT)) {
            if (writable)
                *entry |= PAGE_WRITABLE;
            continue;
        }
        long error = address_space_map_new(root, page, 1, writable);
        if (error != 0)
            return error;
        *bytes += PAGE_SIZE;
    }
    return address_space_write(root, segment->virtual_address, image->file + segment->file_offset,
                               segment->file_bytes);
}

/* Splits `arguments` into words in `buffer`; fills words[]; returns the count. */
static int split_words(const char *arguments, char *buffer, const char **words, int max)
{
    int count = 0;
    strncpy(buffer, arguments, ARGUMENTS_BYTES - 1);
    buffer[ARGUMENTS_BYTES - 1] = '\0';
    for (char *cursor = buffer; *cursor != '\0' && count < max;) {
        while (*cursor == ' ')
            *cursor++ = '\0';
        if (*cursor == '\0')
            break;
        words[count++] = cursor;
        while (*cursor != ' ' && *cursor != '\0')
            cursor++;
    }
    return count;
}

static long build_stack(uint64_t root, const char *name, const char *arguments,
                        struct loaded_program *program)
{
    char buffer[ARGUMENTS_BYTES];
    const char *words[MAX_ARGUMENTS + 1];
    words[0] = name;
    int argc = 1 + split_words(arguments, buffer, words + 1, MAX_ARGUMENTS);
    uint64_t pointers[MAX_ARGUMENTS + 2];
    uint64_t top = USER_STACK_TOP;
    for (int i = argc - 1; i >= 0; i--) {
        uint64_t length = strlen(words[i]) + 1;
        top -= length;
        if (address_space_write(root, top, words[i], length) != 0)
            return -E_FAULT;
        pointers[i] = top;
    }
    pointers[argc] = 0;
    top = (top - (uint64_t)(argc + 1) * 8) & ~15ull;
    if (address_space_write(root, top, pointers, (uint64_t)(argc + 1) * 8) != 0)
        return -E_FAULT;
    program->argc = (uint64_t)argc;
    program->argv = top;
    program->stack_pointer = top - 16;
    return 0;
}

static long load_into(uint64_t root, const struct elf_image *image, const char *name,
                      const char *arguments, struct loaded_program *program)
{
    uint64_t highest = 0;
    for (uint16_t i = 0; i < image->segment_count; i++) {
        long error = load_segment(root, image, &image->segments[i], &program->memory_bytes);
        if (error != 0)
            return error;
        uint64_t end = image->segments[i].virtual_address + image->segments[i].memory_bytes;
        if (end > highest)
            highest = end;
    }
    uint64_t stack_bottom = USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE;
    long error = address_space_map_new(root, stack_bottom, USER_STACK_PAGES, 1);
    if (error != 0)
        return error;
    program->memory_bytes += USER_STACK_PAGES * PAGE_SIZE;
    program->heap_start = (highest + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    program->entry = image->entry;
    return build_stack(root, name, arguments, program);
}

long program_load(const uint8_t *file, uint64_t size, const char *name, const char *arguments,
                  struct loaded_program *program)
{
    struct elf_image image;
    memset(program, 0, sizeof(*program));
    int error = elf_read(file, size, USER_SPACE_START, USER_PROGRAM_END, &image);
    if (error != ELF_OK) {
        kprintf("loader: program '%s' rejected: %s\n", name, elf_error_text(error));
        return -E_BAD_PROGRAM;
    }
    program->root = address_space_create();
    if (program->root == 0)
        return -E_NO_MEMORY;
    long result = load_into(program->root, &image, name, arguments, program);
    if (result != 0) {
        address_space_destroy(program->root);
        program->root = 0;
    }
    return result;
}
