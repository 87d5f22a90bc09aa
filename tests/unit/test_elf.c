/* test_elf.c: host unit tests of mkernel/elf.c, the ELF64 reader: a real
 * static x86-64 executable made by the host toolchain (build/out/unit/tiny.elf)
 * is read, then corrupted copies check every refusal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <elf.h> /* the system's ELF definitions: an independent reference */
#include "elf.h" /* mkernel/elf.h (found through -iquote) */

#ifndef OUT_DIR
#define OUT_DIR "."
#endif

#define LOW 0x1000ull
#define HIGH 0x0000800000000000ull /* the lower canonical half */

/* The real executable, loaded once for all tests. */
static uint8_t *tiny;
static size_t tiny_bytes;

static int load_tiny(void **state)
{
    (void)state;
    FILE *file = fopen(OUT_DIR "/tiny.elf", "rb");
    if (file == NULL) {
        fprintf(stderr, "cannot open %s\n", OUT_DIR "/tiny.elf");
        return -1;
    }
    tiny = malloc(1 << 20);
    tiny_bytes = fread(tiny, 1, 1 << 20, file);
    fclose(file);
    return tiny_bytes > sizeof(Elf64_Ehdr) ? 0 : -1;
}

static int unload_tiny(void **state)
{
    (void)state;
    free(tiny);
    return 0;
}

/* A private, exactly sized copy (ASan then catches any read past its end). */
static uint8_t *copy_of_tiny(size_t bytes)
{
    uint8_t *copy = malloc(bytes > 0 ? bytes : 1);
    assert_non_null(copy);
    memcpy(copy, tiny, bytes < tiny_bytes ? bytes : tiny_bytes);
    return copy;
}

static Elf64_Ehdr *header_of(uint8_t *file)
{
    return (Elf64_Ehdr *)file;
}

static Elf64_Phdr *program_header(uint8_t *file, unsigned index)
{
    return (Elf64_Phdr *)(file + header_of(file)->e_phoff + index * sizeof(Elf64_Phdr));
}

/* Index of the first PT_LOAD whose flags include `flag` (PF_X, PF_W). */
static unsigned find_load(uint8_t *file, uint32_t flag)
{
    for (unsigned i = 0; i < header_of(file)->e_phnum; i++)
        if (program_header(file, i)->p_type == PT_LOAD && (program_header(file, i)->p_flags & flag))
            return i;
    fail_msg("tiny.elf has no PT_LOAD with flag %u", flag);
    return 0;
}

static int read_copy(uint8_t *copy, size_t bytes, uint64_t lowest, uint64_t highest)
{
    struct elf_image image;
    int result = elf_read(copy, bytes, lowest, highest, &image);
    free(copy);
    return result;
}

static void test_real_executable(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    struct elf_image image;
    assert_int_equal(elf_read(file, tiny_bytes, LOW, HIGH, &image), ELF_OK);
    assert_ptr_equal(image.file, file);
    assert_int_equal(image.file_bytes, tiny_bytes);
    assert_int_equal(image.entry, header_of(file)->e_entry);
    unsigned loads = 0;
    int saw_bss = 0;
    for (unsigned i = 0; i < header_of(file)->e_phnum; i++) {
        const Elf64_Phdr *program = program_header(file, i);
        if (program->p_type != PT_LOAD || program->p_memsz == 0)
            continue;
        const struct elf_segment *segment = &image.segments[loads++];
        assert_int_equal(segment->virtual_address, program->p_vaddr);
        assert_int_equal(segment->file_offset, program->p_offset);
        assert_int_equal(segment->file_bytes, program->p_filesz);
        assert_int_equal(segment->memory_bytes, program->p_memsz);
        assert_int_equal(segment->flags, program->p_flags & (PF_R | PF_W | PF_X));
        if (program->p_memsz > program->p_filesz && (program->p_flags & PF_W))
            saw_bss = 1;
    }
    assert_true(loads >= 2);
    assert_int_equal(image.segment_count, loads);
    assert_true(saw_bss); /* the .bss of elf_tiny.c: memsz > filesz */
    /* The entry is inside the executable segment. */
    const Elf64_Phdr *code = program_header(file, find_load(file, PF_X));
    assert_true(image.entry >= code->p_vaddr && image.entry < code->p_vaddr + code->p_memsz);
    assert_int_equal(PF_X, ELF_SEGMENT_EXECUTE);
    assert_int_equal(PF_W, ELF_SEGMENT_WRITE);
    assert_int_equal(PF_R, ELF_SEGMENT_READ);
    free(file);
}

/* The allowed range may be exactly the span of the segments. */
static void test_range_exact_and_one_off(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    uint64_t lowest = UINT64_MAX, highest = 0;
    for (unsigned i = 0; i < header_of(file)->e_phnum; i++) {
        const Elf64_Phdr *program = program_header(file, i);
        if (program->p_type != PT_LOAD || program->p_memsz == 0)
            continue;
        if (program->p_vaddr < lowest)
            lowest = program->p_vaddr;
        if (program->p_vaddr + program->p_memsz > highest)
            highest = program->p_vaddr + program->p_memsz;
    }
    struct elf_image image;
    assert_int_equal(elf_read(file, tiny_bytes, lowest, highest, &image), ELF_OK);
    assert_int_equal(elf_read(file, tiny_bytes, lowest + 1, highest, &image), ELF_ERROR_ADDRESS);
    assert_int_equal(elf_read(file, tiny_bytes, lowest, highest - 1, &image), ELF_ERROR_ADDRESS);
    /* A kernel-half range refuses the low user addresses. */
    assert_int_equal(elf_read(file, tiny_bytes, 0xffffffff80000000ull, UINT64_MAX, &image),
                     ELF_ERROR_ADDRESS);
    free(file);
}

/* Every truncation is refused, with the error of the part that is missing. */
static void test_truncated_file(void **state)
{
    (void)state;
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)tiny;
    size_t table_end = header->e_phoff + header->e_phnum * sizeof(Elf64_Phdr);
    size_t data_end = 0;
    for (unsigned i = 0; i < header->e_phnum; i++) {
        const Elf64_Phdr *program = (const Elf64_Phdr *)(tiny + header->e_phoff) + i;
        if (program->p_type == PT_LOAD && program->p_memsz > 0 &&
            program->p_offset + program->p_filesz > data_end)
            data_end = program->p_offset + program->p_filesz;
    }
    assert_true(table_end < data_end && data_end <= tiny_bytes);
    for (size_t bytes = 0; bytes < tiny_bytes; bytes++) {
        int expected = bytes < sizeof(Elf64_Ehdr) ? ELF_ERROR_TOO_SHORT
                       : bytes < table_end        ? ELF_ERROR_HEADERS
                       : bytes < data_end         ? ELF_ERROR_SEGMENT
                                                  : ELF_OK;
        int result = read_copy(copy_of_tiny(bytes), bytes, LOW, HIGH);
        if (result != expected)
            fail_msg("truncated to %zu bytes: got %d, expected %d", bytes, result, expected);
    }
}

static void test_bad_magic(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        uint8_t *file = copy_of_tiny(tiny_bytes);
        file[i] ^= 0x20;
        assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_MAGIC);
    }
    /* Not an ELF at all: zeros and text. */
    uint8_t *zeros = calloc(1, 4096);
    assert_int_equal(read_copy(zeros, 4096, LOW, HIGH), ELF_ERROR_MAGIC);
    char *text = malloc(100);
    memset(text, 'A', 100);
    assert_int_equal(read_copy((uint8_t *)text, 100, LOW, HIGH), ELF_ERROR_MAGIC);
}

static void test_wrong_class_data_machine(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    file[EI_CLASS] = ELFCLASS32;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_CLASS);
    file = copy_of_tiny(tiny_bytes);
    file[EI_DATA] = ELFDATA2MSB;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_CLASS);
    const uint16_t machines[] = {EM_386, EM_AARCH64, EM_RISCV, 0};
    for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
        file = copy_of_tiny(tiny_bytes);
        header_of(file)->e_machine = machines[i];
        assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_CLASS);
    }
}

static void test_not_an_executable(void **state)
{
    (void)state;
    const uint16_t types[] = {ET_NONE, ET_REL, ET_DYN, ET_CORE};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        uint8_t *file = copy_of_tiny(tiny_bytes);
        header_of(file)->e_type = types[i];
        assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_TYPE);
    }
}

static void test_program_headers_out_of_file(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    header_of(file)->e_phoff = tiny_bytes;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_HEADERS);
    file = copy_of_tiny(tiny_bytes);
    header_of(file)->e_phoff = tiny_bytes - sizeof(Elf64_Phdr) + 1;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_HEADERS);
    file = copy_of_tiny(tiny_bytes);
    header_of(file)->e_phoff = UINT64_MAX - 8; /* offset + size would wrap */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_HEADERS);
    file = copy_of_tiny(tiny_bytes);
    header_of(file)->e_phnum = 0xffff;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_HEADERS);
    file = copy_of_tiny(tiny_bytes);
    header_of(file)->e_phentsize = 32;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_HEADERS);
    /* The table may end exactly at the end of the file. */
    size_t table_bytes = header_of(tiny)->e_phnum * sizeof(Elf64_Phdr);
    file = malloc(tiny_bytes + table_bytes);
    memcpy(file, tiny, tiny_bytes);
    memcpy(file + tiny_bytes, tiny + header_of(tiny)->e_phoff, table_bytes);
    header_of(file)->e_phoff = tiny_bytes;
    assert_int_equal(read_copy(file, tiny_bytes + table_bytes, LOW, HIGH), ELF_OK);
}

static void test_segment_file_bytes_beyond_memory(void **state)
{
    (void)state;
    /* memsz shrunk below filesz; the file bytes themselves stay inside the file. */
    uint8_t *file = copy_of_tiny(tiny_bytes);
    Elf64_Phdr *code = program_header(file, find_load(file, PF_X));
    assert_true(code->p_filesz > 1);
    code->p_memsz = code->p_filesz - 1;
    header_of(file)->e_entry = code->p_vaddr;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_SEGMENT);
    /* filesz == memsz is fine. */
    file = copy_of_tiny(tiny_bytes);
    code = program_header(file, find_load(file, PF_X));
    code->p_memsz = code->p_filesz;
    header_of(file)->e_entry = code->p_vaddr;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_OK);
}

static void test_segment_out_of_file(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    program_header(file, find_load(file, PF_X))->p_offset = tiny_bytes + 1;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_SEGMENT);
    file = copy_of_tiny(tiny_bytes);
    Elf64_Phdr *code = program_header(file, find_load(file, PF_X));
    code->p_offset = tiny_bytes - code->p_filesz + 1; /* last byte one past the end */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_SEGMENT);
    file = copy_of_tiny(tiny_bytes);
    code = program_header(file, find_load(file, PF_X));
    code->p_offset = UINT64_MAX - 4; /* offset + filesz wraps */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_SEGMENT);
    file = copy_of_tiny(tiny_bytes);
    code = program_header(file, find_load(file, PF_X));
    code->p_filesz = code->p_memsz = UINT64_MAX; /* filesz huge, fits memsz */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_SEGMENT);
    /* Ending exactly at the end of the file is fine. */
    file = copy_of_tiny(tiny_bytes);
    code = program_header(file, find_load(file, PF_X));
    memmove(file + tiny_bytes - code->p_filesz, file + code->p_offset, code->p_filesz);
    code->p_offset = tiny_bytes - code->p_filesz;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_OK);
}

static void test_segment_address_out_of_range(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    program_header(file, find_load(file, PF_W))->p_vaddr = 0x0; /* below LOW */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_ADDRESS);
    file = copy_of_tiny(tiny_bytes);
    Elf64_Phdr *data = program_header(file, find_load(file, PF_W));
    data->p_vaddr = HIGH - data->p_memsz + 1; /* ends one byte past HIGH */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_ADDRESS);
    file = copy_of_tiny(tiny_bytes);
    data = program_header(file, find_load(file, PF_W));
    data->p_vaddr = HIGH - data->p_memsz; /* ends exactly at HIGH */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_OK);
}

static void test_segment_address_wraps(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    Elf64_Phdr *data = program_header(file, find_load(file, PF_W));
    data->p_vaddr = UINT64_MAX - 0x10;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, UINT64_MAX), ELF_ERROR_ADDRESS);
    file = copy_of_tiny(tiny_bytes);
    data = program_header(file, find_load(file, PF_W));
    data->p_memsz = UINT64_MAX - data->p_vaddr + 2; /* end wraps to 1 */
    assert_int_equal(read_copy(file, tiny_bytes, 0, UINT64_MAX), ELF_ERROR_ADDRESS);
}

static void test_entry_outside_code(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    const Elf64_Phdr *data = program_header(file, find_load(file, PF_W));
    header_of(file)->e_entry = data->p_vaddr; /* in a writable, non-executable segment */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_ENTRY);
    file = copy_of_tiny(tiny_bytes);
    header_of(file)->e_entry = 0;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_ENTRY);
    file = copy_of_tiny(tiny_bytes);
    const Elf64_Phdr *code = program_header(file, find_load(file, PF_X));
    header_of(file)->e_entry = code->p_vaddr + code->p_memsz; /* one past the end */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_ENTRY);
    file = copy_of_tiny(tiny_bytes);
    code = program_header(file, find_load(file, PF_X));
    header_of(file)->e_entry = code->p_vaddr + code->p_memsz - 1; /* last byte */
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_OK);
    /* The code segment made non-executable: the entry has nowhere to be. */
    file = copy_of_tiny(tiny_bytes);
    program_header(file, find_load(file, PF_X))->p_flags = PF_R;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_ENTRY);
}

static void test_no_loadable_segment(void **state)
{
    (void)state;
    uint8_t *file = copy_of_tiny(tiny_bytes);
    for (unsigned i = 0; i < header_of(file)->e_phnum; i++)
        if (program_header(file, i)->p_type == PT_LOAD)
            program_header(file, i)->p_type = PT_NOTE;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_NO_SEGMENTS);
    file = copy_of_tiny(tiny_bytes);
    header_of(file)->e_phnum = 0;
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_NO_SEGMENTS);
    /* Empty PT_LOADs (memsz 0) are skipped, even with nonsense fields. */
    file = copy_of_tiny(tiny_bytes);
    for (unsigned i = 0; i < header_of(file)->e_phnum; i++) {
        Elf64_Phdr *program = program_header(file, i);
        if (program->p_type == PT_LOAD) {
            program->p_memsz = program->p_filesz = 0;
            program->p_offset = UINT64_MAX;
            program->p_vaddr = UINT64_MAX;
        }
    }
    assert_int_equal(read_copy(file, tiny_bytes, LOW, HIGH), ELF_ERROR_NO_SEGMENTS);
}

/* A hand-made executable with `loads` one-page code segments. */
static uint8_t *make_many_segments(unsigned loads, size_t *bytes)
{
    *bytes = sizeof(Elf64_Ehdr) + loads * sizeof(Elf64_Phdr);
    uint8_t *file = calloc(1, *bytes);
    assert_non_null(file);
    Elf64_Ehdr *header = header_of(file);
    memcpy(header->e_ident, ELFMAG, SELFMAG);
    header->e_ident[EI_CLASS] = ELFCLASS64;
    header->e_ident[EI_DATA] = ELFDATA2LSB;
    header->e_ident[EI_VERSION] = EV_CURRENT;
    header->e_type = ET_EXEC;
    header->e_machine = EM_X86_64;
    header->e_version = EV_CURRENT;
    header->e_entry = 0x400000;
    header->e_phoff = sizeof(Elf64_Ehdr);
    header->e_ehsize = sizeof(Elf64_Ehdr);
    header->e_phentsize = sizeof(Elf64_Phdr);
    header->e_phnum = (uint16_t)loads;
    for (unsigned i = 0; i < loads; i++) {
        Elf64_Phdr *program = program_header(file, i);
        program->p_type = PT_LOAD;
        program->p_flags = PF_R | PF_X;
        program->p_offset = 0;
        program->p_vaddr = 0x400000 + i * 0x1000ull;
        program->p_filesz = 0;
        program->p_memsz = 0x1000;
        program->p_align = 0x1000;
    }
    return file;
}

static void test_sixteen_segments_at_most(void **state)
{
    (void)state;
    size_t bytes;
    uint8_t *file = make_many_segments(16, &bytes);
    struct elf_image image;
    assert_int_equal(elf_read(file, bytes, LOW, HIGH, &image), ELF_OK);
    assert_int_equal(image.segment_count, 16);
    assert_int_equal(image.segments[15].virtual_address, 0x40f000);
    free(file);
    file = make_many_segments(17, &bytes);
    assert_int_equal(read_copy(file, bytes, LOW, HIGH), ELF_ERROR_SEGMENT);
}

static void test_error_texts(void **state)
{
    (void)state;
    for (int error = ELF_OK; error >= ELF_ERROR_ENTRY; error--) {
        const char *text = elf_error_text(error);
        assert_non_null(text);
        assert_string_not_equal(text, "unknown error");
    }
    assert_string_equal(elf_error_text(ELF_OK), "ok");
    assert_string_equal(elf_error_text(ELF_ERROR_ENTRY - 1), "unknown error");
    assert_string_equal(elf_error_text(1), "unknown error");
    assert_string_equal(elf_error_text(-1000000), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_executable),
        cmocka_unit_test(test_range_exact_and_one_off),
        cmocka_unit_test(test_truncated_file),
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_wrong_class_data_machine),
        cmocka_unit_test(test_not_an_executable),
        cmocka_unit_test(test_program_headers_out_of_file),
        cmocka_unit_test(test_segment_file_bytes_beyond_memory),
        cmocka_unit_test(test_segment_out_of_file),
        cmocka_unit_test(test_segment_address_out_of_range),
        cmocka_unit_test(test_segment_address_wraps),
        cmocka_unit_test(test_entry_outside_code),
        cmocka_unit_test(test_no_loadable_segment),
        cmocka_unit_test(test_sixteen_segments_at_most),
        cmocka_unit_test(test_error_texts),
    };
    return cmocka_run_group_tests(tests, load_tiny, unload_tiny);
}
