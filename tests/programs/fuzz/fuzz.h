/* fuzz.h: the pieces of the system-call and ICA fuzzer (tests/programs/fuzz,
 * docs/fuzzing.md): its random source and argument pools (random.c,
 * values.c), the call families (syscalls.c, requests.c, files.c,
 * children.c) and the run's bookkeeping (main.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define FUZZ_HELD_ICAS 40 /* ICAs kept at once (ICA_PER_PROCESS is 64) */
#define FUZZ_CHILDREN 6   /* live children at once */
#define FUZZ_FILES 8      /* open files at once */
#define FUZZ_DIRECTORY "/fuzz"

/* The state of one run: what the fuzzer holds, so that calls can use real
 * handles as well as forged ones, and what it saw. */
struct fuzz {
    uint64_t seed;
    uint64_t state; /* the random generator */
    uint64_t calls, call_limit;
    bool trace, child;
    long self, parent;
    long servers[4]; /* fs, blk, dk, pager (or an error when absent) */
    uint64_t held[FUZZ_HELD_ICAS];
    uint32_t held_count;
    uint64_t freed_id;    /* an ICA id freed earlier: stale */
    uint32_t outstanding; /* asynchronous requests whose results are not collected */
    long children[FUZZ_CHILDREN];
    uint32_t child_count;
    int files[FUZZ_FILES];
    uint32_t file_count;
    bool registered;
    uint64_t anomalies; /* results no call may give (a success where an error was due) */
    uint64_t errors, successes;
};

/* random.c */
void random_seed(struct fuzz *fuzz, uint64_t seed);
uint64_t random_next(struct fuzz *fuzz);
/* A number in [0, bound). */
uint64_t random_below(struct fuzz *fuzz, uint64_t bound);
/* True with probability percent / 100. */
bool random_chance(struct fuzz *fuzz, unsigned percent);
void random_fill(struct fuzz *fuzz, void *buffer, uint64_t bytes);

/* values.c: argument pools. A pointer the process may read and write, one it
 * may read but never write (its own code, read-only data), one it may not
 * touch at all (unmapped, kernel, not canonical), or any of them. */
enum pointer_class { POINTER_WRITABLE, POINTER_READ_ONLY, POINTER_FORBIDDEN, POINTER_CLASSES };
uint64_t pick_pointer(struct fuzz *fuzz, enum pointer_class class, uint64_t bytes);
enum pointer_class pick_class(struct fuzz *fuzz);
uint64_t pick_size(struct fuzz *fuzz);
uint64_t pick_ica_id(struct fuzz *fuzz);
long pick_pid(struct fuzz *fuzz);
/* Room that POINTER_WRITABLE pointers point into (FUZZ_SCRATCH_BYTES). */
#define FUZZ_SCRATCH_BYTES (64u * 1024)
#define FUZZ_GUARD_BYTES 256u /* after the scratch area: checked after every call */
uint8_t *scratch(void);
/* `bytes` from a pointer into the scratch area, cut at the area's end. */
uint64_t clamp_to_scratch(uint64_t address, uint64_t bytes);
/* The guard after the scratch area: set once, checked after every call. */
void scratch_guard_set(void);
bool scratch_guard_intact(void);

/* main.c: one line per call with --trace; counts results. */
long fuzz_result(struct fuzz *fuzz, const char *name, long result, uint64_t a, uint64_t b,
                 uint64_t c);
/* A result that breaks the contract: printed always, counted as an anomaly. */
void fuzz_anomaly(struct fuzz *fuzz, const char *name, long result, const char *why);

/* The calls remembered that involve `value` (0: the last few), printed. */
void fuzz_print_history(const struct fuzz *fuzz, uint64_t value);

/* syscalls.c */
void fuzz_system_call(struct fuzz *fuzz);
/* requests.c */
void fuzz_request(struct fuzz *fuzz);
void fuzz_flood(struct fuzz *fuzz);
void ica_keep(struct fuzz *fuzz, uint64_t id);
void ica_forget(struct fuzz *fuzz, uint64_t id);
void collect_outstanding(struct fuzz *fuzz);
/* files.c */
void fuzz_file(struct fuzz *fuzz);
void files_close_all(struct fuzz *fuzz);
/* Removes what earlier runs left under FUZZ_DIRECTORY; 0 or the first error. */
long files_clean(void);
/* children.c */
void fuzz_child_step(struct fuzz *fuzz);
void children_end_all(struct fuzz *fuzz);
