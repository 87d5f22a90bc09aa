/* history.c: the last operations of a run, kept in a ring and printed when
 * a check fails, with the command that replays the run; and the mismatch
 * report itself. */
#include "exerciser.h"
#include <formica/user.h>
#include <stdio.h>

static struct operation recent[HISTORY_OPERATIONS];
static uint32_t recorded; /* operations added so far */

static const char *const kind_names[OPERATION_KINDS] = {
    [OPERATION_READ] = "read",           [OPERATION_WRITE] = "write",
    [OPERATION_PREAD] = "pread",         [OPERATION_PWRITE] = "pwrite",
    [OPERATION_READBLOCK] = "readblock", [OPERATION_WRITEBLOCK] = "writeblock",
    [OPERATION_READBYTE] = "readbyte",   [OPERATION_WRITEBYTE] = "writebyte",
    [OPERATION_TRUNCATE] = "ftruncate",  [OPERATION_FSYNC] = "fsync",
    [OPERATION_REOPEN] = "reopen",       [OPERATION_STAT] = "fstat",
};

const char *operation_kind_name(uint8_t kind)
{
    return kind < OPERATION_KINDS ? kind_names[kind] : "?";
}

void history_add(const struct operation *operation)
{
    recent[recorded++ % HISTORY_OPERATIONS] = *operation;
}

void operation_describe(const struct operation *operation, char *buffer, size_t size)
{
    const char *name = operation_kind_name(operation->kind);
    switch (operation->kind) {
    case OPERATION_TRUNCATE:
        snprintf(buffer, size, "%s to %lu", name, operation->length);
        return;
    case OPERATION_FSYNC:
    case OPERATION_STAT:
        snprintf(buffer, size, "%s", name);
        return;
    case OPERATION_REOPEN:
        snprintf(buffer, size, "%s%s%s", name, operation->flags & REOPEN_APPEND ? " O_APPEND" : "",
                 operation->flags & REOPEN_TRUNCATE ? " O_TRUNC" : "");
        return;
    }
    snprintf(buffer, size, "%s %lu+%lu (to %lu)", name, operation->offset, operation->length,
             operation->offset + operation->length);
}

void history_print_tail(const struct exerciser_options *options)
{
    uint32_t shown = recorded < HISTORY_OPERATIONS ? recorded : HISTORY_OPERATIONS;
    printf("fileexerciser: the last %u operations of the writer (seed %lu):\n", shown,
           options->seed);
    for (uint32_t i = recorded - shown; i < recorded; i++) {
        char text[96];
        operation_describe(&recent[i % HISTORY_OPERATIONS], text, sizeof text);
        printf("  #%u %s\n", recent[i % HISTORY_OPERATIONS].number, text);
    }
    printf("fileexerciser: replay with: run fileexerciser --seed %lu -n %u -f %s --max-file %lu "
           "--max-transfer %lu%s\n",
           options->seed, options->operations, options->path, options->max_file_bytes,
           options->max_transfer_bytes, options->reader_core >= 0 ? " --reader CORE" : "");
}

void report_mismatch(const char *side, const struct exerciser_options *options,
                     const struct operation *operation, const char *what, uint64_t offset,
                     long expected, long got)
{
    char text[96];
    operation_describe(operation, text, sizeof text);
    printf("fileexerciser: %s: MISMATCH in %s (%s) at offset %lu: expected %ld, got %ld "
           "(seed %lu, writer's operation %u)\n",
           side, text, what, offset, expected, got, options->seed, operation->number);
    printf("@json {\"kind\":\"fileexerciser_mismatch\",\"side\":\"%s\",\"seed\":%lu,"
           "\"operation\":%u,\"call\":\"%s\",\"what\":\"%s\",\"offset\":%lu,\"expected\":%ld,"
           "\"got\":%ld,\"core\":%ld}\n",
           side, options->seed, operation->number, operation_kind_name(operation->kind), what,
           offset, expected, got, core_id());
}
