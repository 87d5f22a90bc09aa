/* nvm_crash_model.c: the simulated NVM of nvm_crash_model.h, an observer of
 * the flush layer. */
#include "nvm_crash_model.h"
#include <formica/nvm_persist.h>
#include <stdlib.h>
#include <string.h>

static struct crash_model *watched;

static uint64_t next_random(struct crash_model *model)
{
    uint64_t z = (model->random += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool in_model(const struct crash_model *model, const void *address)
{
    const uint8_t *at = address;
    return at >= model->memory && at < model->memory + model->bytes;
}

static void take_image(struct crash_model *model)
{
    memcpy(model->image, model->durable, model->bytes);
    for (size_t line = 0; line < model->bytes; line += NVM_LINE_BYTES) {
        bool coin = next_random(model) & 1;
        if (model->line_pending[line / NVM_LINE_BYTES]) {
            if ((model->mode & CRASH_SOME_UNFENCED) && coin)
                memcpy(model->image + line, model->pending + line, NVM_LINE_BYTES);
        } else if ((model->mode & CRASH_SOME_EVICTED) && coin) {
            memcpy(model->image + line, model->memory + line, NVM_LINE_BYTES);
        }
    }
    model->crashed = true;
    model->progress_at_crash = model->progress != NULL ? *model->progress : 0;
}

/* Every event is a point where the machine may stop, before the event. */
static void event(struct crash_model *model)
{
    if (!model->crashed && model->events == model->crash_at)
        take_image(model);
    model->events++;
}

void crash_model_point(void)
{
    if (watched != NULL)
        event(watched);
}

static void wrote(void *context, const void *address, size_t bytes)
{
    (void)address, (void)bytes;
    event(context);
}

static void flushed(void *context, const void *address, size_t bytes)
{
    struct crash_model *model = context;
    event(model);
    if (!in_model(model, address))
        return;
    size_t first = (size_t)((const uint8_t *)address - model->memory) & ~(size_t)63;
    size_t end = (size_t)((const uint8_t *)address - model->memory) + bytes;
    for (size_t line = first; line < end && line < model->bytes; line += NVM_LINE_BYTES) {
        memcpy(model->pending + line, model->memory + line, NVM_LINE_BYTES);
        model->line_pending[line / NVM_LINE_BYTES] = true;
    }
}

static void fenced(void *context)
{
    struct crash_model *model = context;
    event(model);
    for (size_t line = 0; line < model->bytes; line += NVM_LINE_BYTES) {
        if (!model->line_pending[line / NVM_LINE_BYTES])
            continue;
        memcpy(model->durable + line, model->pending + line, NVM_LINE_BYTES);
        model->line_pending[line / NVM_LINE_BYTES] = false;
    }
}

static struct nvm_observer observer = {wrote, flushed, fenced, NULL};

void crash_model_init(struct crash_model *model, size_t bytes, uint8_t initial, unsigned mode,
                      uint64_t crash_at, uint64_t seed, const uint64_t *progress)
{
    *model = (struct crash_model){
        .memory = aligned_alloc(NVM_LINE_BYTES, bytes),
        .durable = calloc(1, bytes),
        .pending = calloc(1, bytes),
        .line_pending = calloc(bytes / NVM_LINE_BYTES, sizeof(bool)),
        .image = calloc(1, bytes),
        .bytes = bytes,
        .mode = mode,
        .crash_at = crash_at,
        .random = seed,
        .progress = progress,
    };
    memset(model->memory, initial, bytes);
    memset(model->durable, initial, bytes);
    watched = model;
    observer.context = model;
    nvm_observe(&observer);
}

void crash_model_free(struct crash_model *model)
{
    if (watched == model) {
        nvm_observe(NULL);
        watched = NULL;
    }
    free(model->memory);
    free(model->durable);
    free(model->pending);
    free(model->line_pending);
    free(model->image);
}

const uint8_t *crash_model_image(struct crash_model *model)
{
    if (!model->crashed)
        memcpy(model->image, model->memory, model->bytes); /* a clean stop writes every line back */
    return model->image;
}
