/* placement.h: parser of placement files, which name the core of every
 * server (fs, blk, dk, pager) and where application processes run. Pure
 * code, no allocation; the format is in docs/placement.md. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <formica/syscalls.h>

#define PLACEMENT_LINE_LIMIT 256 /* characters per line, line ending excluded */
#define PLACEMENT_MESSAGE_BYTES 96

struct placement_error {
    uint32_t line; /* 1-based line of the file */
    char message[PLACEMENT_MESSAGE_BYTES];
};

/* Parses `text` (length bytes, not necessarily NUL-terminated) for a machine
 * of core_count cores, core_socket[i] = socket of core i (NULL: one socket).
 * Returns the number of errors: 0 = ok, *out filled (warnings 0), out->name
 * left as the caller set it. On errors, fills up to max_errors entries
 * (errors may be NULL when max_errors is 0) and sets *out to
 * placement_default() with warnings = the number of errors. */
int placement_parse(const char *text, size_t length, uint32_t core_count,
                    const uint32_t *core_socket, struct placement_info *out,
                    struct placement_error *errors, unsigned max_errors);

/* The safe default: every server and every application on core 0 (preset
 * #1), name "default". core_count is accepted for symmetry; core 0 always exists. */
void placement_default(uint32_t core_count, struct placement_info *out);

/* Writes a one-line summary, e.g. "fs=C1 blk=C2 dk=C0 pager=C0 app=C0";
 * lists as "app=C0,C3", spread as "app=spread(C0,C3|C1,C2)" (the cores
 * before '|' are the preferred ones). Truncates; NUL-terminated if size > 0. */
void placement_describe(const struct placement_info *placement, char *buffer, size_t size);
