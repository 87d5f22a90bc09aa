/* child.c: one Bonnie process: opens the file, says it is ready, waits for
 * the common start, then makes its references (read a chunk with readblock
 * or readbyte; on an update rewrite its own 16-byte slot of the chunk). */
#include "bonnie.h"
#include "bonnie_random.h"
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct child_state {
    const struct bonnie_options *options;
    int fd;
    uint64_t chunks;
    uint8_t *chunk_copy;  /* readbyte's destination */
    uint8_t *own_slots;   /* what this child last wrote into each chunk's slot */
    uint32_t slot_offset; /* BONNIE_SLOT_BYTES * child index */
    uint32_t updates, mismatches;
};

/* Reads the chunk; returns a pointer to its bytes or NULL. */
static const uint8_t *read_chunk(struct child_state *state, uint64_t chunk)
{
    const struct bonnie_options *options = state->options;
    uint64_t offset = chunk * options->chunk;
    if (options->mode == MODE_READBLOCK) {
        const void *data;
        long bytes = readblock(state->fd, options->chunk / STORAGE_BLOCK_BYTES,
                               offset / STORAGE_BLOCK_BYTES, &data);
        return bytes == (long)options->chunk ? data : NULL;
    }
    long bytes = readbyte(state->fd, options->chunk, offset, state->chunk_copy);
    return bytes == (long)options->chunk ? state->chunk_copy : NULL;
}

/* The process sees its own writes: its slot holds what it last wrote. */
static void check_own_slot(struct child_state *state, uint64_t chunk, const uint8_t *bytes)
{
    if (memcmp(bytes + state->slot_offset, state->own_slots + chunk * BONNIE_SLOT_BYTES,
               BONNIE_SLOT_BYTES) != 0)
        state->mismatches++;
}

static long update_slot(struct child_state *state, const struct bonnie_reference *reference)
{
    uint8_t *slot = state->own_slots + reference->chunk * BONNIE_SLOT_BYTES;
    memcpy(slot, reference->pattern, BONNIE_SLOT_BYTES); /* x86-64: little-endian */
    uint64_t offset = reference->chunk * state->options->chunk + state->slot_offset;
    state->updates++;
    if (state->options->mode == MODE_READBYTE)
        return writebyte(state->fd, BONNIE_SLOT_BYTES, offset, slot);
    return pwrite(state->fd, slot, BONNIE_SLOT_BYTES, offset);
}

static long run_references(struct child_state *state)
{
    const struct bonnie_options *options = state->options;
    struct bonnie_random random;
    bonnie_random_seed(&random, options->seed, options->child_index);
    for (uint32_t i = 0; i < options->refs; i++) {
        struct bonnie_reference reference;
        bonnie_next_reference(&random, state->chunks, options->update_pct, &reference);
        const uint8_t *bytes = read_chunk(state, reference.chunk);
        if (bytes == NULL)
            return -E_IO;
        check_own_slot(state, reference.chunk, bytes);
        if (reference.update && update_slot(state, &reference) != BONNIE_SLOT_BYTES)
            return -E_IO;
    }
    return 0;
}

/* Allocates the buffers and fills own_slots with the file's initial bytes. */
static long set_up(struct child_state *state)
{
    const struct bonnie_options *options = state->options;
    state->chunks = options->file_bytes / options->chunk;
    state->slot_offset = options->child_index * BONNIE_SLOT_BYTES;
    state->chunk_copy = malloc(options->chunk);
    state->own_slots = malloc(state->chunks * BONNIE_SLOT_BYTES);
    if (state->chunk_copy == NULL || state->own_slots == NULL)
        return -E_NO_MEMORY;
    for (uint64_t chunk = 0; chunk < state->chunks; chunk++)
        for (uint32_t i = 0; i < BONNIE_SLOT_BYTES; i++)
            state->own_slots[chunk * BONNIE_SLOT_BYTES + i] =
                bonnie_fill_byte(chunk * options->chunk + state->slot_offset + i);
    state->fd = open(options->path, O_RDWR);
    if (state->fd < 0)
        return state->fd;
    struct file_status status;
    return fstat(state->fd, &status); /* the channel's control ICA, before the start */
}

int bonnie_run_child(const struct bonnie_options *options)
{
    struct child_state state = {.options = options, .fd = -1};
    long error = set_up(&state);
    notify(options->parent_pid);
    await_notification();
    if (error == 0)
        error = run_references(&state);
    struct readbyte_counts counts;
    readbyte_counts_get(&counts);
    if (state.fd >= 0)
        close(state.fd);
    printf("@json {\"kind\":\"bonnie_child\",\"child\":%u,\"core\":%ld,\"updates\":%u,"
           "\"mismatches\":%u,\"readbyte_fetches\":%lu,\"readbyte_hits\":%lu,\"error\":%ld}\n",
           options->child_index, core_id(), state.updates, state.mismatches, counts.fetches,
           counts.hits, error);
    if (error != 0)
        printf("bonnie: process %u: %s\n", options->child_index, error_text(error));
    return error == 0 && state.mismatches == 0 ? 0 : 1;
}
