/* test_initrd.c: host unit tests of mkernel/initrd.c against real archives
 * made at test time with the host's `tar --format=ustar`, corrupted copies of
 * them (ASan checks no read leaves the buffer) and hand-built headers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <formica/errors.h>
#include "initrd.h"

#define BLOCK 512

struct test_file {
    const char *path;
    size_t size;
};

static char long_path[200];

static struct test_file files[] = {
    {"empty", 0},
    {"one", 1},
    {"bin/hello511", 511},
    {"bin/hello512", 512},
    {"bin/hello513", 513},
    {"data/big", 100 * 1024},
    {"a/b/c/d/nested.txt", 700},
    {"placements/5.conf", 40},
    {long_path, 300}, /* set up in make_archive: needs the prefix field */
};
#define FILE_COUNT (sizeof(files) / sizeof(files[0]))

static char work_dir[] = "/tmp/formica-initrd-XXXXXX";
static uint8_t *archive;
static size_t archive_bytes;

/* ---- Building the archive ------------------------------------------------ */

static uint8_t content_byte(size_t file_index, size_t offset)
{
    return (uint8_t)(offset * 31 + file_index * 7 + (offset >> 9));
}

static void run(const char *command)
{
    if (system(command) != 0)
        fail_msg("command failed: %s", command);
}

static void write_file(size_t index)
{
    char path[512], command[1024];
    snprintf(path, sizeof(path), "%s/root/%s", work_dir, files[index].path);
    snprintf(command, sizeof(command), "mkdir -p \"$(dirname '%s')\"", path);
    run(command);
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    for (size_t i = 0; i < files[index].size; i++)
        fputc(content_byte(index, i), file);
    fclose(file);
}

static uint8_t *read_whole(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    fseek(file, 0, SEEK_END);
    *size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    uint8_t *data = malloc(*size);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, *size, file), *size);
    fclose(file);
    return data;
}

static int make_archive(void **state)
{
    (void)state;
    if (mkdtemp(work_dir) == NULL)
        return -1;
    /* 5 + 60 + 1 + 50 + 1 + 13 = 130 characters: too long for the name field. */
    snprintf(long_path, sizeof(long_path), "long/%.60s/%.50s/long-file.txt",
             "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
             "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
    for (size_t i = 0; i < FILE_COUNT; i++)
        write_file(i);
    char command[1024], path[512];
    snprintf(command, sizeof(command), "tar --format=ustar -cf '%s/initrd.tar' -C '%s/root' .",
             work_dir, work_dir);
    run(command);
    snprintf(path, sizeof(path), "%s/initrd.tar", work_dir);
    archive = read_whole(path, &archive_bytes);
    return 0;
}

static int remove_archive(void **state)
{
    (void)state;
    char command[512];
    snprintf(command, sizeof(command), "rm -rf '%s'", work_dir);
    free(archive);
    return system(command) == 0 ? 0 : -1;
}

/* An exact-size heap copy, so ASan catches any read past its end. */
static uint8_t *copy_of(const uint8_t *bytes, size_t size)
{
    uint8_t *copy = malloc(size == 0 ? 1 : size);
    assert_non_null(copy);
    memcpy(copy, bytes, size);
    return copy;
}

/* Offset of the header whose name field ends with `name`. */
static size_t header_of(const uint8_t *bytes, size_t size, const char *name)
{
    size_t length = strlen(name);
    for (size_t offset = 0; offset + BLOCK <= size; offset += BLOCK) {
        size_t name_length = strnlen((const char *)bytes + offset, 100);
        if (name_length >= length &&
            memcmp(bytes + offset + name_length - length, name, length) == 0 &&
            memcmp(bytes + offset + 257, "ustar", 5) == 0)
            return offset;
    }
    fail_msg("no header for %s", name);
    return 0;
}

static void set_checksum(uint8_t *header)
{
    unsigned sum = 0;
    memset(header + 148, ' ', 8);
    for (int i = 0; i < BLOCK; i++)
        sum += header[i];
    snprintf((char *)header + 148, 8, "%06o", sum);
    header[155] = ' ';
}

/* ---- Finding files ------------------------------------------------------- */

/* Name, size and bytes as written; the bytes lie inside [base, base + size). */
static void assert_file_matches(size_t index, const struct initrd_file *file, const uint8_t *base,
                                size_t size)
{
    assert_string_equal(file->name, files[index].path);
    assert_int_equal(file->size, files[index].size);
    for (size_t i = 0; i < files[index].size; i++)
        if (file->data[i] != content_byte(index, i))
            fail_msg("%s: byte %zu differs", files[index].path, i);
    assert_true(file->data >= base && file->data + file->size <= base + size);
}

static void test_find_every_file(void **state)
{
    (void)state;
    for (size_t i = 0; i < FILE_COUNT; i++) {
        struct initrd_file file;
        assert_int_equal(initrd_find(archive, archive_bytes, files[i].path, &file), 0);
        assert_file_matches(i, &file, archive, archive_bytes);
    }
}

static void test_long_path_uses_prefix(void **state)
{
    (void)state;
    size_t offset = header_of(archive, archive_bytes, "long-file.txt");
    assert_true(archive[offset + 345] != '\0');
    assert_true(strlen(long_path) > 100);
}

static void test_find_with_dot_slash(void **state)
{
    (void)state;
    struct initrd_file file;
    assert_int_equal(initrd_find(archive, archive_bytes, "./bin/hello512", &file), 0);
    assert_file_matches(3, &file, archive, archive_bytes);
}

static void test_not_found(void **state)
{
    (void)state;
    struct initrd_file file;
    assert_int_equal(initrd_find(archive, archive_bytes, "missing", &file), -E_NOT_FOUND);
    assert_int_equal(initrd_find(archive, archive_bytes, "bin", &file),
                     -E_NOT_FOUND); /* a directory */
    assert_int_equal(initrd_find(archive, archive_bytes, "bin/hello51", &file), -E_NOT_FOUND);
    assert_int_equal(initrd_find(archive, archive_bytes, "bin/hello5111", &file), -E_NOT_FOUND);
    assert_int_equal(initrd_find(archive, archive_bytes, "", &file), -E_NOT_FOUND);
}

struct visit_record {
    const uint8_t *base;
    size_t size;
    unsigned seen[FILE_COUNT];
    int visits;
};

static void record_visit(const struct initrd_file *file, void *context)
{
    struct visit_record *record = context;
    record->visits++;
    for (size_t i = 0; i < FILE_COUNT; i++) {
        if (strcmp(file->name, files[i].path) == 0) {
            record->seen[i]++;
            assert_file_matches(i, file, record->base, record->size);
            return;
        }
    }
    fail_msg("unexpected file %s", file->name);
}

static void test_each_visits_every_regular_file(void **state)
{
    (void)state;
    struct visit_record record = {archive, archive_bytes, {0}, 0};
    assert_int_equal(initrd_each(archive, archive_bytes, record_visit, &record), (int)FILE_COUNT);
    assert_int_equal(record.visits, (int)FILE_COUNT);
    for (size_t i = 0; i < FILE_COUNT; i++)
        assert_int_equal(record.seen[i], 1);
}

static void test_empty_archives(void **state)
{
    (void)state;
    struct initrd_file file;
    struct visit_record record = {NULL, 0, {0}, 0};
    assert_int_equal(initrd_find(NULL, 0, "one", &file), -E_NOT_FOUND);
    assert_int_equal(initrd_each(NULL, 0, record_visit, &record), 0);
    uint8_t *zeros = calloc(1, 2 * BLOCK);
    assert_int_equal(initrd_find(zeros, 2 * BLOCK, "one", &file), -E_NOT_FOUND);
    assert_int_equal(initrd_each(zeros, 2 * BLOCK, record_visit, &record), 0);
    assert_int_equal(initrd_each(zeros, 100, record_visit, &record), 0); /* a short zero tail */
    free(zeros);
    assert_int_equal(record.visits, 0);
}

static void test_garbage_after_end_blocks_ignored(void **state)
{
    (void)state;
    /* tar pads to 10 KiB records with zeros; put junk after them. */
    uint8_t *longer = malloc(archive_bytes + 3 * BLOCK);
    memcpy(longer, archive, archive_bytes);
    memset(longer + archive_bytes, 0xee, 3 * BLOCK);
    struct visit_record record = {longer, archive_bytes + 3 * BLOCK, {0}, 0};
    int count = initrd_each(longer, archive_bytes + 3 * BLOCK, record_visit, &record);
    free(longer);
    assert_int_equal(count, (int)FILE_COUNT);
}

/* ---- Corrupt archives ---------------------------------------------------- */

static int find_in_copy(const uint8_t *bytes, size_t size, const char *name)
{
    uint8_t *copy = copy_of(bytes, size);
    struct initrd_file file;
    int status = initrd_find(copy, size, name, &file);
    free(copy);
    return status;
}

static int each_in_copy(const uint8_t *bytes, size_t size)
{
    uint8_t *copy = copy_of(bytes, size);
    struct visit_record record = {copy, size, {0}, 0};
    int status = initrd_each(copy, size, record_visit, &record);
    free(copy);
    if (status < 0)
        assert_int_equal(record.visits, 0);
    return status;
}

static void test_bad_checksum(void **state)
{
    (void)state;
    uint8_t *bad = copy_of(archive, archive_bytes);
    size_t offset = header_of(bad, archive_bytes, "hello513");
    bad[offset + 148 + 5] ^= 1; /* a checksum digit */
    assert_int_equal(find_in_copy(bad, archive_bytes, "bin/hello513"), -E_INVALID);
    assert_int_equal(each_in_copy(bad, archive_bytes), -E_INVALID);
    memcpy(bad, archive, archive_bytes);
    bad[offset + 10] ^= 0x40; /* a byte the checksum covers */
    assert_int_equal(find_in_copy(bad, archive_bytes, "bin/hello513"), -E_INVALID);
    free(bad);
}

static void test_size_not_octal(void **state)
{
    (void)state;
    uint8_t *bad = copy_of(archive, archive_bytes);
    size_t offset = header_of(bad, archive_bytes, "data/big");
    memcpy(bad + offset + 124, "00000z00000", 11);
    set_checksum(bad + offset);
    assert_int_equal(find_in_copy(bad, archive_bytes, "data/big"), -E_INVALID);
    assert_int_equal(each_in_copy(bad, archive_bytes), -E_INVALID);
    memcpy(bad + offset + 124, "           ", 11); /* no digit at all */
    set_checksum(bad + offset);
    assert_int_equal(find_in_copy(bad, archive_bytes, "data/big"), -E_INVALID);
    free(bad);
}

static void test_size_past_the_end(void **state)
{
    (void)state;
    uint8_t *bad = copy_of(archive, archive_bytes);
    size_t offset = header_of(bad, archive_bytes, "data/big");
    memcpy(bad + offset + 124, "77777777777", 11);
    set_checksum(bad + offset);
    assert_int_equal(find_in_copy(bad, archive_bytes, "data/big"), -E_INVALID);
    assert_int_equal(each_in_copy(bad, archive_bytes), -E_INVALID);
    /* One byte more than the archive holds after the header. */
    size_t room = archive_bytes - offset - BLOCK;
    snprintf((char *)bad + offset + 124, 12, "%011zo", room + 1);
    set_checksum(bad + offset);
    assert_int_equal(find_in_copy(bad, archive_bytes, "data/big"), -E_INVALID);
    free(bad);
}

static void test_truncated(void **state)
{
    (void)state;
    size_t offset = header_of(archive, archive_bytes, "data/big");
    /* Cut inside the data of data/big. */
    size_t cut = offset + BLOCK + 50 * 1024;
    assert_int_equal(find_in_copy(archive, cut, "data/big"), -E_INVALID);
    assert_int_equal(each_in_copy(archive, cut), -E_INVALID);
    /* Cut inside its header. */
    assert_int_equal(find_in_copy(archive, offset + 100, "data/big"), -E_INVALID);
    /* Cut exactly at its header: the archive just ends there. */
    assert_int_equal(find_in_copy(archive, offset, "data/big"), -E_NOT_FOUND);
}

/* Every cut and every flipped header byte: a status, never a stray read. */
static void test_every_cut_and_flip(void **state)
{
    (void)state;
    size_t end = archive_bytes < 40 * BLOCK ? archive_bytes : 40 * BLOCK;
    for (size_t cut = 0; cut <= archive_bytes; cut += 61) {
        int status = find_in_copy(archive, cut, "a/b/c/d/nested.txt");
        assert_true(status == 0 || status == -E_NOT_FOUND || status == -E_INVALID);
        status = each_in_copy(archive, cut);
        assert_true(status >= 0 || status == -E_INVALID);
    }
    uint8_t *bad = copy_of(archive, archive_bytes);
    for (size_t i = 0; i < end; i += 3) {
        bad[i] ^= 0xa5;
        int status = initrd_find(bad, archive_bytes, long_path, &(struct initrd_file){0});
        assert_true(status == 0 || status == -E_NOT_FOUND || status == -E_INVALID);
        bad[i] ^= 0xa5;
    }
    free(bad);
}

/* ---- Hand-built headers -------------------------------------------------- */

static void make_header(uint8_t *header, const char *name, size_t name_length, const char *prefix,
                        char type, size_t size)
{
    memset(header, 0, BLOCK);
    memcpy(header, name, name_length);
    memcpy(header + 100, "0000644", 7);
    snprintf((char *)header + 124, 12, "%011zo", size);
    header[156] = (uint8_t)type;
    memcpy(header + 257,
           "ustar\0"
           "00",
           8);
    if (prefix != NULL)
        memcpy(header + 345, prefix, strlen(prefix));
    set_checksum(header);
}

static void test_hand_built_headers(void **state)
{
    (void)state;
    char full_name[101];
    memset(full_name, 'n', 100);
    full_name[100] = '\0';
    uint8_t *image = calloc(1, 8 * BLOCK);
    make_header(image, "dir/", 4, NULL, '5', 0);
    make_header(image + BLOCK, "link", 4, NULL, '2', 0);
    make_header(image + 2 * BLOCK, full_name, 100, "p/q", '\0', 3); /* name field without NUL */
    memcpy(image + 3 * BLOCK, "abc", 3);
    make_header(image + 4 * BLOCK, "./x", 3, NULL, '0', 0);
    struct initrd_file file;
    char wanted[120];
    snprintf(wanted, sizeof(wanted), "p/q/%s", full_name);
    uint8_t *copy = copy_of(image, 5 * BLOCK); /* no end blocks: ends at the buffer's end */
    assert_int_equal(initrd_find(copy, 5 * BLOCK, wanted, &file), 0);
    assert_string_equal(file.name, wanted);
    assert_int_equal(file.size, 3);
    assert_memory_equal(file.data, "abc", 3);
    assert_int_equal(initrd_find(copy, 5 * BLOCK, "x", &file), 0);
    assert_int_equal(file.size, 0);
    assert_int_equal(initrd_find(copy, 5 * BLOCK, "link", &file), -E_NOT_FOUND);
    assert_int_equal(initrd_find(copy, 5 * BLOCK, "dir", &file), -E_NOT_FOUND);
    free(copy);
    /* Without the ustar magic it is not an archive. */
    memcpy(image + 2 * BLOCK + 257, "xxxxx", 5);
    set_checksum(image + 2 * BLOCK);
    assert_int_equal(find_in_copy(image, 5 * BLOCK, wanted), -E_INVALID);
    free(image);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_every_file),
        cmocka_unit_test(test_long_path_uses_prefix),
        cmocka_unit_test(test_find_with_dot_slash),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_each_visits_every_regular_file),
        cmocka_unit_test(test_empty_archives),
        cmocka_unit_test(test_garbage_after_end_blocks_ignored),
        cmocka_unit_test(test_bad_checksum),
        cmocka_unit_test(test_size_not_octal),
        cmocka_unit_test(test_size_past_the_end),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_every_cut_and_flip),
        cmocka_unit_test(test_hand_built_headers),
    };
    return cmocka_run_group_tests(tests, make_archive, remove_archive);
}
