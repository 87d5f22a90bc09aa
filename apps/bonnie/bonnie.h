/* bonnie.h: the pieces of Bonnie (apps/bonnie): options (options.c), the
 * random-reference test of seed 003 (seeker.c, child.c), the servers' cycles
 * around it (server_cycles.c) and Tim Bray's sequential tests (sequential.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define BONNIE_DEFAULT_PATH "/bonnie.dat"

enum bonnie_mode { MODE_READBLOCK, MODE_READBYTE };

struct bonnie_options {
    uint32_t procs;
    enum bonnie_mode mode;
    uint64_t file_bytes;
    uint32_t refs;
    uint32_t update_pct;
    uint32_t chunk;
    uint64_t seed;
    const char *path;
    bool sequential;
    bool child; /* --child I: one benchmark process */
    uint32_t child_index;
    long parent_pid;
};

/* Fills `options` from argv; prints the problem and returns false if bad. */
bool bonnie_parse_options(int argc, char **argv, struct bonnie_options *options);
const char *bonnie_mode_name(enum bonnie_mode mode);

int bonnie_run_seeker(const struct bonnie_options *options); /* the parent */
int bonnie_run_child(const struct bonnie_options *options);  /* one process */
int bonnie_run_sequential(const struct bonnie_options *options);

/* Microseconds in `cycles` of the TSC. */
uint64_t bonnie_cycles_to_us(uint64_t cycles);

/* FS, BLK and DK's cpu_cycles; found[i] is false where no such server runs
 * (on Linux none does). */
#define BONNIE_SERVERS 3
struct bonnie_server_cycles {
    uint64_t cycles[BONNIE_SERVERS]; /* summed over the server's instances */
    uint32_t pids[BONNIE_SERVERS];   /* their sum: an instance init restarted has a new pid */
    bool found[BONNIE_SERVERS];
};
void bonnie_server_cycles(struct bonnie_server_cycles *snapshot);
/* Appends ,"server_cycles":{"fs":..,"blk":..,"dk":..} (the differences) to a
 * JSON object being printed; nothing when no server was found. */
void bonnie_print_server_cycles(const struct bonnie_server_cycles *before,
                                const struct bonnie_server_cycles *after);
