/* initrd.h: reader of the boot image of user programs, a POSIX ustar archive
 * (tar --format=ustar). Finds and lists regular files in place, without
 * copying; every header and size is checked against the archive's bounds. */
#pragma once
#include <stdint.h>

/* prefix (155) + '/' + name (100) + NUL: the longest ustar path. */
#define INITRD_NAME_BYTES 257

struct initrd_file {
    char name[INITRD_NAME_BYTES]; /* full path, without a leading "./" */
    const uint8_t *data;          /* inside the archive */
    uint64_t size;
};

/* Finds `name` (no leading "./"; e.g. "bin/hello" or "placements/5.conf").
 * Returns 0, -E_NOT_FOUND, or -E_INVALID for a corrupt archive (bad header
 * checksum, size field not octal, file running past the end). */
int initrd_find(const void *archive, uint64_t archive_bytes, const char *name,
                struct initrd_file *file);

/* Calls visit(file, context) for each regular file in order; returns the
 * count or -E_INVALID. The whole archive is checked first, so a corrupt one
 * gets no visit at all. */
int initrd_each(const void *archive, uint64_t archive_bytes,
                void (*visit)(const struct initrd_file *file, void *context), void *context);
