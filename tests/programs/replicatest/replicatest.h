/* replicatest.h: what the two sides of replicatest share: the files one
 * round changes, their contents and the @json case report. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define ROUND_FILE_BYTES 10000u
#define ROUND_TRUNCATED_BYTES 5000u
#define PATCH_OFFSET 100u
#define PATCH_BYTES 8u

/* The byte at `offset` of round `round`'s file. */
static inline uint8_t round_byte(uint32_t round, uint64_t offset)
{
    return (uint8_t)(round * 31u + offset * 7u + 1u);
}
/* The byte at `offset` after the patch of round `round` (PATCH_BYTES at PATCH_OFFSET). */
static inline uint8_t patched_byte(uint32_t round, uint64_t offset)
{
    if (offset >= PATCH_OFFSET && offset < PATCH_OFFSET + PATCH_BYTES)
        return (uint8_t)(0xa0u + round);
    return round_byte(round, offset);
}

/* Prints one @json replicatest line; returns ok. */
bool report(const char *side, const char *name, uint32_t round, bool ok, long got);

/* The writer's steps (writer.c) and the reader's checks (reader.c). */
enum round_step {
    STEP_CREATED,   /* /replicatest/R.txt created with ROUND_FILE_BYTES */
    STEP_PATCHED,   /* PATCH_BYTES overwritten in place (a small write) */
    STEP_RENAMED,   /* R.txt renamed to R.moved */
    STEP_TRUNCATED, /* R.moved truncated to ROUND_TRUNCATED_BYTES */
    STEP_UNLINKED,  /* R.moved unlinked while the reader holds it open */
    STEPS,
};
/* Does `step` of `round`; false when it failed (reported). */
bool writer_step(uint32_t round, enum round_step step);
/* Checks what `step` of `round` changed, at once; false when it did not see it. */
bool reader_check(uint32_t round, enum round_step step);
/* The round's path with `suffix` ("txt" or "moved"). */
void round_path(char *buffer, uint32_t round, const char *suffix);

/* churn.c: `replicatest churn WRITER_CORE READER_CORE ROUNDS`, the writer
 * that rewrites, truncates and extends one file each round, and the reader
 * it starts on READER_CORE (`--churn-reader WRITER_PID ROUNDS`), which
 * checks the whole file after each round. Each returns its exit code. */
int churn_writer(uint32_t reader_core, uint32_t rounds);
int churn_reader(long writer, uint32_t rounds);
