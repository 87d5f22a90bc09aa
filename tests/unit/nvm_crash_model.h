/* nvm_crash_model.h: a simulated NVM for the flush layer's host tests. The
 * program stores into `memory` (its cache view); the model watches the
 * flush layer (nvm_observe): a flush takes a snapshot of each line it
 * covers, a fence makes those snapshots durable. At a chosen event the
 * model takes the crash image: the durable lines, plus (by mode) a random
 * half of the flushed-but-unfenced lines and of the lines stored but never
 * flushed (the cache may evict any line at any time). Recovery code then
 * reads the image. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum crash_mode {
    CRASH_DURABLE_ONLY = 0,  /* only lines flushed and then fenced survive */
    CRASH_SOME_UNFENCED = 1, /* and some flushed ones a fence did not follow */
    CRASH_SOME_EVICTED = 2,  /* and some stored ones never flushed */
};

struct crash_model {
    uint8_t *memory;  /* what the program sees and stores into */
    uint8_t *durable; /* what a crash keeps for sure */
    uint8_t *pending; /* snapshots of flushed lines, not yet fenced */
    bool *line_pending;
    uint8_t *image; /* the crash image, once taken */
    size_t bytes;
    unsigned mode;     /* enum crash_mode bits */
    uint64_t events;   /* writes, flushes and fences seen */
    uint64_t crash_at; /* take the image before this event (UINT64_MAX: never) */
    bool crashed;
    uint64_t random;          /* the model's generator state */
    const uint64_t *progress; /* the program's counter of completed operations */
    uint64_t progress_at_crash;
};

/* A model of `bytes` (a multiple of 64) bytes, each `initial` and durable
 * (what an earlier use left), observing the flush layer. */
void crash_model_init(struct crash_model *model, size_t bytes, uint8_t initial, unsigned mode,
                      uint64_t crash_at, uint64_t seed, const uint64_t *progress);
/* A point between the program's own operations where the machine may stop
 * too (a program that never calls the flush layer has no other). */
void crash_model_point(void);
/* Stops observing and frees the buffers. */
void crash_model_free(struct crash_model *model);
/* The crash image, or for a run that did not crash the memory as it ends
 * (a clean stop writes every line back). */
const uint8_t *crash_model_image(struct crash_model *model);
