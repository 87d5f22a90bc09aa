/* options.c: Bonnie's command line: -p PROCS -m readblock|readbyte -s SIZE
 * -n REFS -u UPDATE_PCT -c CHUNK --seed S -f PATH, --sequential, and the
 * child-mode --child I --parent PID the parent passes to its processes. */
#include "bonnie.h"
#include "bonnie_random.h"
#include <formica/file.h>
#include <stdio.h>
#include <formica/size.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROCS 64

static void set_defaults(struct bonnie_options *options)
{
    memset(options, 0, sizeof *options);
    options->procs = 1;
    options->mode = MODE_READBLOCK;
    options->file_bytes = 128 * 1024;
    options->refs = 4000;
    options->update_pct = 10;
    options->chunk = STORAGE_BLOCK_BYTES;
    options->seed = 1;
    options->path = BONNIE_DEFAULT_PATH;
}

/* Applies one option with its value; false if unknown or malformed. */
static bool apply_option(struct bonnie_options *options, const char *name, const char *value)
{
    uint64_t number;
    if (strcmp(name, "-m") == 0) {
        options->mode = strcmp(value, "readbyte") == 0 ? MODE_READBYTE : MODE_READBLOCK;
        return strcmp(value, "readbyte") == 0 || strcmp(value, "readblock") == 0;
    }
    if (strcmp(name, "-f") == 0) {
        options->path = value;
        return true;
    }
    if (!size_parse(value, &number))
        return false;
    if (strcmp(name, "-p") == 0)
        options->procs = (uint32_t)number;
    else if (strcmp(name, "-s") == 0)
        options->file_bytes = number;
    else if (strcmp(name, "-n") == 0)
        options->refs = (uint32_t)number;
    else if (strcmp(name, "-u") == 0)
        options->update_pct = (uint32_t)number;
    else if (strcmp(name, "-c") == 0)
        options->chunk = (uint32_t)number;
    else if (strcmp(name, "--seed") == 0)
        options->seed = number;
    else if (strcmp(name, "--child") == 0)
        options->child = true, options->child_index = (uint32_t)number;
    else if (strcmp(name, "--parent") == 0)
        options->parent_pid = (long)number;
    else
        return false;
    return true;
}

/* The combination makes sense; prints why not. */
static bool check_options(const struct bonnie_options *options)
{
    const char *problem = NULL;
    if (options->procs < 1 || options->procs > MAX_PROCS)
        problem = "-p must be 1..64";
    else if (options->chunk == 0 || options->chunk > ICA_DATA_MAX_BYTES)
        problem = "-c must be 1 .. 1M";
    else if (options->mode == MODE_READBLOCK && options->chunk % STORAGE_BLOCK_BYTES != 0)
        problem = "-c must be a multiple of 4096 with readblock";
    else if (options->file_bytes < options->chunk || options->file_bytes % options->chunk != 0)
        problem = "-s must be a non-zero multiple of -c";
    else if (options->update_pct > 100)
        problem = "-u must be 0..100";
    else if (!options->sequential && options->procs * BONNIE_SLOT_BYTES > options->chunk)
        problem = "-c must hold 16 bytes per process";
    if (problem != NULL)
        printf("bonnie: %s\n", problem);
    return problem == NULL;
}

bool bonnie_parse_options(int argc, char **argv, struct bonnie_options *options)
{
    set_defaults(options);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sequential") == 0) {
            options->sequential = true;
            continue;
        }
        if (i + 1 >= argc || !apply_option(options, argv[i], argv[i + 1])) {
            printf("bonnie: bad option '%s'\n"
                   "usage: bonnie [-p PROCS] [-m readblock|readbyte] [-s SIZE] [-n REFS] [-u PCT]\n"
                   "              [-c CHUNK] [--seed S] [-f PATH] | --sequential [-s SIZE] [-f "
                   "PATH]\n",
                   argv[i]);
            return false;
        }
        i++;
    }
    return check_options(options);
}

const char *bonnie_mode_name(enum bonnie_mode mode)
{
    return mode == MODE_READBYTE ? "readbyte" : "readblock";
}
