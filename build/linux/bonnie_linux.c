/* build/linux/bonnie_linux.c: the POSIX shim that lets apps/bonnie build as a
 * static Linux program (build/linux/build.sh) for the evaluation's Linux
 * comparison (docs/evaluation.md). The Bonnie sources are compiled unchanged
 * against the headers in build/linux/include/formica/; this file implements what those
 * headers declare:
 *   - readblock: pread of the requested blocks into a per-process buffer;
 *   - readbyte: a per-process direct-mapped buffer of 4 KiB blocks, a block's
 *     first reference preads it, later ones make no system call (as Formica's
 *     lib/readbyte.c); writebyte writes through with pwrite;
 *   - spawn: fork; the new process parses the argument string and runs
 *     Bonnie's child part (bonnie_run_child) - no exec;
 *   - notify/await_notification: one byte per notification on pipes (children
 *     to the parent on one pipe, the parent to each child on its own);
 *   - read_timestamp_counter: CLOCK_MONOTONIC in ns, clock_get says 1 GHz. */
#define _GNU_SOURCE
#include "bonnie.h"
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <formica/json.h>
#include <formica/placement_rule.h>
#include <formica/user.h>

#define READBYTE_SLOTS 1024u /* as lib/readbyte.c: at most 4 MiB buffered */
#define MAX_CHILDREN 64
#define MAX_ARGUMENTS 40

/* ---- files ---------------------------------------------------------------- */

static uint8_t *readblock_buffer;
static size_t readblock_buffer_bytes;

long readblock(int fd, uint32_t size, uint64_t blkoff, const void **data)
{
    size_t bytes = (size_t)size * STORAGE_BLOCK_BYTES;
    if (bytes > readblock_buffer_bytes) {
        free(readblock_buffer);
        readblock_buffer = malloc(bytes);
        readblock_buffer_bytes = readblock_buffer == NULL ? 0 : bytes;
        if (readblock_buffer == NULL)
            return -E_NO_MEMORY;
    }
    ssize_t got = pread(fd, readblock_buffer, bytes, (off_t)(blkoff * STORAGE_BLOCK_BYTES));
    if (got < 0)
        return -1;
    *data = readblock_buffer;
    return (long)got;
}

struct buffered_block {
    int used;
    uint32_t valid_bytes;
    uint64_t block;
    uint8_t bytes[STORAGE_BLOCK_BYTES];
};

/* Bonnie reads one file, so blocks are keyed by block number alone. */
static struct buffered_block *readbyte_slots;
static struct readbyte_counts readbyte_counts;

static struct buffered_block *get_block(int fd, uint64_t block)
{
    if (readbyte_slots == NULL &&
        (readbyte_slots = calloc(READBYTE_SLOTS, sizeof *readbyte_slots)) == NULL)
        return NULL;
    struct buffered_block *slot = &readbyte_slots[block % READBYTE_SLOTS];
    if (slot->used && slot->block == block) {
        readbyte_counts.hits++;
        return slot;
    }
    ssize_t got = pread(fd, slot->bytes, STORAGE_BLOCK_BYTES, (off_t)(block * STORAGE_BLOCK_BYTES));
    if (got < 0)
        return NULL;
    readbyte_counts.fetches++;
    if (!slot->used)
        readbyte_counts.buffered++;
    slot->used = 1;
    slot->block = block;
    slot->valid_bytes = (uint32_t)got;
    return slot;
}

long readbyte(int fd, size_t size, uint64_t offset, void *buffer)
{
    size_t done = 0;
    while (done < size) {
        uint64_t position = offset + done;
        uint32_t within = (uint32_t)(position % STORAGE_BLOCK_BYTES);
        struct buffered_block *slot = get_block(fd, position / STORAGE_BLOCK_BYTES);
        if (slot == NULL)
            return done > 0 ? (long)done : -E_IO;
        if (slot->valid_bytes <= within)
            break;
        size_t piece = slot->valid_bytes - within;
        if (piece > size - done)
            piece = size - done;
        memcpy((uint8_t *)buffer + done, slot->bytes + within, piece);
        done += piece;
        if (slot->valid_bytes < STORAGE_BLOCK_BYTES)
            break;
    }
    return (long)done;
}

long writebyte(int fd, size_t size, uint64_t offset, const void *data)
{
    ssize_t written = pwrite(fd, data, size, (off_t)offset);
    if (written < 0)
        return -1;
    for (size_t done = 0; readbyte_slots != NULL && done < (size_t)written;) {
        uint64_t position = offset + done;
        uint32_t within = (uint32_t)(position % STORAGE_BLOCK_BYTES);
        size_t piece = STORAGE_BLOCK_BYTES - within;
        if (piece > (size_t)written - done)
            piece = (size_t)written - done;
        struct buffered_block *slot =
            &readbyte_slots[(position / STORAGE_BLOCK_BYTES) % READBYTE_SLOTS];
        if (slot->used && slot->block == position / STORAGE_BLOCK_BYTES &&
            within <= slot->valid_bytes) {
            memcpy(slot->bytes + within, (const uint8_t *)data + done, piece);
            if (within + piece > slot->valid_bytes)
                slot->valid_bytes = (uint32_t)(within + piece);
        }
        done += piece;
    }
    return (long)written;
}

void readbyte_counts_get(struct readbyte_counts *counts)
{
    *counts = readbyte_counts;
}

/* ---- processes and notifications --------------------------------------------- */

static int ready_pipe[2] = {-1, -1};   /* children -> parent */
static int go_read_fd = -1;            /* in a child: parent -> this child */
static long go_pids[MAX_CHILDREN];     /* in the parent: each child's pid ... */
static int go_write_fds[MAX_CHILDREN]; /* ... and its pipe's write end */
static int children;
static long parent_pid; /* in a child: who spawned it */

long process_id(void)
{
    return (long)getpid();
}

long core_id(void)
{
    return (long)sched_getcpu();
}

/* Splits `arguments` on spaces into argv[1..] (argv[0] = program). */
static int split_arguments(const char *program, char *arguments, char **argv)
{
    int argc = 0;
    argv[argc++] = (char *)program;
    for (char *word = strtok(arguments, " "); word != NULL && argc < MAX_ARGUMENTS - 1;
         word = strtok(NULL, " "))
        argv[argc++] = word;
    argv[argc] = NULL;
    return argc;
}

/* In the new process: run Bonnie's child part with the arguments given. */
static void run_spawned(const char *program, const char *arguments, uint32_t core)
{
    char copy[ARGUMENTS_BYTES];
    char *argv[MAX_ARGUMENTS];
    snprintf(copy, sizeof copy, "%s", arguments);
    int argc = split_arguments(program, copy, argv);
    const char *pin = getenv("BONNIE_LINUX_PIN");
    if (pin != NULL && strcmp(pin, "1") == 0) {
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        CPU_SET((int)core, &cpus);
        sched_setaffinity(0, sizeof cpus, &cpus);
    }
    struct bonnie_options options;
    int code = bonnie_parse_options(argc, argv, &options) ? bonnie_run_child(&options) : 2;
    fflush(stdout);
    _exit(code);
}

long spawn(const char *program, const char *arguments, uint32_t core, uint32_t priority)
{
    (void)priority; /* every Linux process is SCHED_OTHER */
    int go_pipe[2];
    if (children >= MAX_CHILDREN || (ready_pipe[0] < 0 && pipe(ready_pipe) != 0) ||
        pipe(go_pipe) != 0)
        return -E_NO_MEMORY;
    fflush(stdout);
    long me = (long)getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -E_NO_MEMORY;
    if (pid == 0) {
        parent_pid = me;
        go_read_fd = go_pipe[0];
        close(go_pipe[1]);
        close(ready_pipe[0]);
        for (int i = 0; i < children; i++)
            close(go_write_fds[i]);
        run_spawned(program, arguments, core);
    }
    close(go_pipe[0]);
    go_pids[children] = pid;
    go_write_fds[children++] = go_pipe[1];
    return pid;
}

long wait_process(long pid, int *exit_code)
{
    int status;
    if (waitpid((pid_t)pid, &status, 0) < 0)
        return -1;
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 0;
}

long notify(long pid)
{
    char byte = 1;
    if (go_read_fd >= 0 && pid == parent_pid)
        return write(ready_pipe[1], &byte, 1) == 1 ? 0 : -1;
    for (int i = 0; i < children; i++)
        if (go_pids[i] == pid)
            return write(go_write_fds[i], &byte, 1) == 1 ? 0 : -1;
    return -1;
}

long await_notification(void)
{
    char bytes[MAX_CHILDREN];
    int fd = go_read_fd >= 0 ? go_read_fd : ready_pipe[0];
    ssize_t got;
    do
        got = read(fd, bytes, go_read_fd >= 0 ? 1 : sizeof bytes);
    while (got < 0 && errno == EINTR);
    return got > 0 ? (long)got : -1;
}

/* ---- time, placement, text -------------------------------------------------- */

uint64_t read_timestamp_counter(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

long clock_get(struct clock_info *clock)
{
    clock->tsc_hz = 1000000000u; /* read_timestamp_counter counts nanoseconds */
    clock->ticks = 0;
    clock->tick_period_us = 0;
    return 0;
}

long placement_get(struct placement_info *placement)
{
    snprintf(placement->name, sizeof placement->name, "linux");
    return 0;
}

long process_list(struct process_info *processes, size_t max)
{
    (void)processes, (void)max;
    return 0; /* no Formica servers: Bonnie prints no server_cycles */
}

uint32_t placement_app_core(const struct placement_info *placement, uint32_t index, uint32_t total)
{
    (void)placement, (void)total;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? index % (uint32_t)cpus : 0;
}

void json_print_string(const char *text)
{
    putchar('"');
    for (; *text != '\0'; text++) {
        if (*text == '"' || *text == '\\')
            printf("\\%c", *text);
        else if ((unsigned char)*text < 0x20)
            printf("\\u%04x", (unsigned char)*text);
        else
            putchar(*text);
    }
    putchar('"');
}
