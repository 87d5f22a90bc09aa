/* initrd.c: walks a POSIX ustar archive held in memory (the initrd boot
 * module) header by header. Checks each header's checksum, magic and octal
 * size, and that every file's bytes lie inside the archive, before use. */
#include "initrd.h"
#include <formica/errors.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define BLOCK_BYTES 512u

/* Fields of a ustar header block: offset and length. */
#define NAME_AT 0
#define NAME_LENGTH 100
#define SIZE_AT 124
#define SIZE_LENGTH 12
#define CHECKSUM_AT 148
#define CHECKSUM_LENGTH 8
#define TYPEFLAG_AT 156
#define MAGIC_AT 257
#define PREFIX_AT 345
#define PREFIX_LENGTH 155

struct cursor {
    const uint8_t *archive;
    uint64_t bytes;
    uint64_t offset; /* of the next header */
};

struct entry {
    const uint8_t *header;
    const uint8_t *data;
    uint64_t size;
};

enum step { STEP_END = 0, STEP_ENTRY = 1 }; /* or -E_INVALID */

static bool all_zero(const uint8_t *bytes, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        if (bytes[i] != 0)
            return false;
    return true;
}

/* Octal digits, optionally led by spaces and ended by NULs or spaces. */
static bool parse_octal(const uint8_t *field, size_t length, uint64_t *value)
{
    size_t i = 0;
    while (i < length && field[i] == ' ')
        i++;
    size_t first_digit = i;
    uint64_t result = 0;
    for (; i < length && field[i] >= '0' && field[i] <= '7'; i++)
        result = result * 8 + (uint64_t)(field[i] - '0');
    if (i == first_digit)
        return false;
    for (; i < length; i++)
        if (field[i] != '\0' && field[i] != ' ')
            return false;
    *value = result;
    return true;
}

/* The checksum is the sum of the header's bytes with its own field as spaces. */
static bool checksum_matches(const uint8_t *header)
{
    uint64_t stored;
    if (!parse_octal(header + CHECKSUM_AT, CHECKSUM_LENGTH, &stored))
        return false;
    uint64_t sum = 0;
    for (unsigned i = 0; i < BLOCK_BYTES; i++) {
        bool in_field = i >= CHECKSUM_AT && i < CHECKSUM_AT + CHECKSUM_LENGTH;
        sum += in_field ? (uint64_t)' ' : header[i];
    }
    return sum == stored;
}

static bool has_ustar_magic(const uint8_t *header)
{
    return memcmp(header + MAGIC_AT, "ustar", 5) == 0;
}

/* POSIX ustar ("ustar\0" "00") has the prefix field; GNU's "ustar  " does not. */
static bool has_prefix_field(const uint8_t *header)
{
    return memcmp(header + MAGIC_AT,
                  "ustar\0"
                  "00",
                  8) == 0;
}

static uint64_t padded_size(uint64_t size)
{
    return size / BLOCK_BYTES * BLOCK_BYTES + (size % BLOCK_BYTES != 0 ? BLOCK_BYTES : 0);
}

/* Reads the header at the cursor. STEP_END at a zero block (the first of the
 * two that end an archive) or at the end of the buffer. */
static int next_entry(struct cursor *cursor, struct entry *entry)
{
    uint64_t remaining = cursor->bytes - cursor->offset;
    if (remaining == 0)
        return STEP_END;
    const uint8_t *header = cursor->archive + cursor->offset;
    if (remaining < BLOCK_BYTES)
        return all_zero(header, remaining) ? STEP_END : -E_INVALID;
    if (all_zero(header, BLOCK_BYTES))
        return STEP_END;
    if (!checksum_matches(header) || !has_ustar_magic(header))
        return -E_INVALID;
    uint64_t size;
    if (!parse_octal(header + SIZE_AT, SIZE_LENGTH, &size))
        return -E_INVALID;
    uint64_t data_offset = cursor->offset + BLOCK_BYTES;
    if (size > cursor->bytes - data_offset)
        return -E_INVALID;
    entry->header = header;
    entry->data = cursor->archive + data_offset;
    entry->size = size;
    uint64_t padded = padded_size(size);
    /* The last file's padding may be cut off: then the archive ends there. */
    cursor->offset = padded > cursor->bytes - data_offset ? cursor->bytes : data_offset + padded;
    return STEP_ENTRY;
}

static bool is_regular_file(const struct entry *entry)
{
    uint8_t type = entry->header[TYPEFLAG_AT];
    return type == '0' || type == '\0';
}

static const char *skip_dot_slash(const char *name)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    return name;
}

/* prefix + "/" + name (fields need no NUL), without a leading "./". */
static void entry_name(const struct entry *entry, char name[INITRD_NAME_BYTES])
{
    const char *header = (const char *)entry->header;
    size_t length = 0;
    if (has_prefix_field(entry->header) && header[PREFIX_AT] != '\0') {
        length = strnlen(header + PREFIX_AT, PREFIX_LENGTH);
        memcpy(name, header + PREFIX_AT, length);
        name[length++] = '/';
    }
    size_t name_length = strnlen(header + NAME_AT, NAME_LENGTH);
    memcpy(name + length, header + NAME_AT, name_length);
    length += name_length;
    name[length] = '\0';
    const char *start = skip_dot_slash(name);
    memmove(name, start, strlen(start) + 1);
}

static void fill_file(const struct entry *entry, const char *name, struct initrd_file *file)
{
    memcpy(file->name, name, strlen(name) + 1);
    file->data = entry->data;
    file->size = entry->size;
}

static struct cursor cursor_start(const void *archive, uint64_t archive_bytes)
{
    struct cursor cursor = {(const uint8_t *)archive, archive == NULL ? 0 : archive_bytes, 0};
    return cursor;
}

int initrd_find(const void *archive, uint64_t archive_bytes, const char *name,
                struct initrd_file *file)
{
    struct cursor cursor = cursor_start(archive, archive_bytes);
    const char *wanted = skip_dot_slash(name);
    struct entry entry;
    char entry_path[INITRD_NAME_BYTES];
    int step;
    while ((step = next_entry(&cursor, &entry)) == STEP_ENTRY) {
        if (!is_regular_file(&entry))
            continue;
        entry_name(&entry, entry_path);
        if (strcmp(entry_path, wanted) == 0) {
            fill_file(&entry, entry_path, file);
            return 0;
        }
    }
    return step == STEP_END ? -E_NOT_FOUND : step;
}

/* Walks the whole archive; returns the regular-file count or -E_INVALID. */
static int count_regular_files(const void *archive, uint64_t archive_bytes)
{
    struct cursor cursor = cursor_start(archive, archive_bytes);
    struct entry entry;
    int count = 0;
    int step;
    while ((step = next_entry(&cursor, &entry)) == STEP_ENTRY)
        if (is_regular_file(&entry))
            count++;
    return step == STEP_END ? count : step;
}

int initrd_each(const void *archive, uint64_t archive_bytes,
                void (*visit)(const struct initrd_file *file, void *context), void *context)
{
    int count = count_regular_files(archive, archive_bytes);
    if (count < 0)
        return count;
    struct cursor cursor = cursor_start(archive, archive_bytes);
    struct entry entry;
    struct initrd_file file;
    while (next_entry(&cursor, &entry) == STEP_ENTRY) {
        if (!is_regular_file(&entry))
            continue;
        entry_name(&entry, file.name);
        file.data = entry.data;
        file.size = entry.size;
        visit(&file, context);
    }
    return count;
}
