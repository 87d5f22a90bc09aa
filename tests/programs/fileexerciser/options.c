/* options.c: fileexerciser's command line, and the one that starts its
 * reader (the same options, so the reader's generator makes the writer's
 * operations). */
#include "exerciser.h"
#include <formica/size.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_OPERATIONS 1000u
#define DEFAULT_PATH "/fileexerciser.dat"
#define DEFAULT_MAX_FILE (2u * 1024 * 1024)
#define DEFAULT_MAX_TRANSFER (1280u * 1024) /* more than one 1 MiB piece */
#define DEFAULT_EPOCH 4u
#define DEFAULT_READS_PER_TURN 2u
#define SMALLEST_FILE (64u * 1024)

static void usage(void)
{
    printf("usage: fileexerciser [-n OPERATIONS] [--seed S] [-f PATH] [--max-file SIZE]\n"
           "         [--max-transfer SIZE] [--reader CORE [--epoch N] [--reads N]]\n"
           "         [--trace FROM]\n");
}

static bool number_of(const char *text, uint64_t *value)
{
    char *end;
    *value = strtoul(text, &end, 0);
    return end != text && *end == '\0';
}

/* The option at argv[*i] with its value, into `options`; false if unknown
 * or malformed. */
static bool take_option(const char *name, const char *value, struct exerciser_options *options)
{
    uint64_t number = 0;
    bool sized = size_parse(value, &number);
    if (strcmp(name, "-f") == 0) {
        options->path = value;
        return value[0] == '/';
    }
    if (strcmp(name, "--max-file") == 0)
        return sized && (options->max_file_bytes = number) >= SMALLEST_FILE;
    if (strcmp(name, "--max-transfer") == 0)
        return sized && (options->max_transfer_bytes = number) >= STORAGE_BLOCK_BYTES;
    if (!number_of(value, &number))
        return false;
    if (strcmp(name, "-n") == 0)
        options->operations = (uint32_t)number;
    else if (strcmp(name, "--seed") == 0)
        options->seed = number;
    else if (strcmp(name, "--reader") == 0)
        options->reader_core = (int32_t)number;
    else if (strcmp(name, "--epoch") == 0)
        return (options->epoch_operations = (uint32_t)number) > 0;
    else if (strcmp(name, "--reads") == 0)
        options->reads_per_turn = (uint32_t)number;
    else if (strcmp(name, "--trace") == 0)
        options->trace_from = (uint32_t)number;
    else if (strcmp(name, "--as-reader") == 0)
        options->writer_pid = (long)number;
    else
        return false;
    return number <= UINT32_MAX;
}

bool options_parse(int argc, char **argv, struct exerciser_options *options)
{
    *options = (struct exerciser_options){
        .seed = read_timestamp_counter() % 1000000007u,
        .operations = DEFAULT_OPERATIONS,
        .path = DEFAULT_PATH,
        .max_file_bytes = DEFAULT_MAX_FILE,
        .max_transfer_bytes = DEFAULT_MAX_TRANSFER,
        .reader_core = -1,
        .epoch_operations = DEFAULT_EPOCH,
        .reads_per_turn = DEFAULT_READS_PER_TURN,
        .writer_pid = -1,
    };
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc || !take_option(argv[i], argv[i + 1], options)) {
            printf("fileexerciser: bad option '%s'\n", argv[i]);
            usage();
            return false;
        }
    }
    if (options->max_transfer_bytes > options->max_file_bytes)
        options->max_transfer_bytes = options->max_file_bytes;
    return true;
}

void options_for_reader(const struct exerciser_options *options, long writer_pid, char *buffer,
                        size_t size)
{
    snprintf(buffer, size,
             "--as-reader %ld --seed %lu -n %u -f %s --max-file %lu --max-transfer %lu "
             "--epoch %u --reads %u",
             writer_pid, options->seed, options->operations, options->path, options->max_file_bytes,
             options->max_transfer_bytes, options->epoch_operations, options->reads_per_turn);
}
