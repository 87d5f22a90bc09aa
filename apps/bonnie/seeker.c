/* seeker.c: the parent of seed 003's Bonnie: creates the file with a known
 * pattern, reads it once so it is cached, starts the children on the cores
 * of the placement, times them from a common start, prints the results. */
#include "bonnie.h"
#include "bonnie_random.h"
#include <formica/file.h>
#include <formica/json.h>
#include <formica/placement_rule.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILL_PIECE (64u * 1024)

static long fill_file(const struct bonnie_options *options, uint8_t *piece)
{
    int fd = open(options->path, O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0)
        return fd;
    long result = 0;
    for (uint64_t done = 0; done < options->file_bytes && result >= 0; done += FILL_PIECE) {
        uint64_t length =
            options->file_bytes - done < FILL_PIECE ? options->file_bytes - done : FILL_PIECE;
        for (uint64_t i = 0; i < length; i++)
            piece[i] = bonnie_fill_byte(done + i);
        result = write(fd, piece, length);
        if (result >= 0 && (uint64_t)result != length)
            result = -E_NO_SPACE;
    }
    close(fd);
    return result < 0 ? result : 0;
}

/* Reads the whole file once (into BLK's cache) and checks the pattern. */
static long preload_file(const struct bonnie_options *options, uint8_t *piece)
{
    int fd = open(options->path, O_RDONLY);
    if (fd < 0)
        return fd;
    long result = 0;
    for (uint64_t done = 0; done < options->file_bytes && result >= 0; done += FILL_PIECE) {
        uint64_t length =
            options->file_bytes - done < FILL_PIECE ? options->file_bytes - done : FILL_PIECE;
        result = read(fd, piece, length);
        if (result >= 0 && (uint64_t)result != length)
            result = -E_CORRUPT;
        for (uint64_t i = 0; result >= 0 && i < length; i++)
            if (piece[i] != bonnie_fill_byte(done + i))
                result = -E_CORRUPT;
    }
    close(fd);
    return result < 0 ? result : 0;
}

static long prepare_file(const struct bonnie_options *options)
{
    uint8_t *piece = malloc(FILL_PIECE);
    if (piece == NULL)
        return -E_NO_MEMORY;
    long error = fill_file(options, piece);
    if (error == 0)
        error = preload_file(options, piece);
    free(piece);
    return error;
}

static long start_child(const struct bonnie_options *options, uint32_t index, uint32_t core)
{
    char arguments[ARGUMENTS_BYTES];
    snprintf(arguments, sizeof arguments,
             "--child %u --parent %ld -p %u -m %s -s %lu -n %u -u %u -c %u --seed %lu -f %s", index,
             process_id(), options->procs, bonnie_mode_name(options->mode), options->file_bytes,
             options->refs, options->update_pct, options->chunk, options->seed, options->path);
    return spawn("bonnie", arguments, core, PRIORITY_APPLICATION);
}

/* Waits until `count` children said they are ready. */
static void await_ready(uint32_t count)
{
    long ready = 0;
    while (ready < (long)count) {
        long got = await_notification();
        if (got < 0)
            return;
        ready += got;
    }
}

/* Every child's exit code; false if any failed. */
static bool wait_children(const long *pids, uint32_t count)
{
    bool all_ok = true;
    for (uint32_t i = 0; i < count; i++) {
        int code = -1;
        if (wait_process(pids[i], &code) < 0 || code != 0) {
            printf("bonnie: process %u (pid %ld) failed with code %d\n", i, pids[i], code);
            all_ok = false;
        }
    }
    return all_ok;
}

static void print_result(const struct bonnie_options *options,
                         const struct placement_info *placement, uint64_t cycles,
                         const struct bonnie_server_cycles servers[2])
{
    uint64_t elapsed_us = bonnie_cycles_to_us(cycles);
    printf("bonnie: %s, %u processes, %lu-byte file, %u references each, %u%% updates, "
           "placement %s: %lu.%03lu ms\n",
           bonnie_mode_name(options->mode), options->procs, options->file_bytes, options->refs,
           options->update_pct, placement->name, elapsed_us / 1000, elapsed_us % 1000);
    printf("@json {\"kind\":\"bonnie\",\"mode\":\"%s\",\"procs\":%u,\"file_bytes\":%lu,\"refs\":%u,"
           "\"update_pct\":%u,\"placement\":",
           bonnie_mode_name(options->mode), options->procs, options->file_bytes, options->refs,
           options->update_pct);
    json_print_string(placement->name);
    printf(",\"elapsed_us\":%lu,\"chunk\":%u,\"seed\":%lu,\"cycles\":%lu,\"path\":", elapsed_us,
           options->chunk, options->seed, cycles);
    json_print_string(options->path);
    bonnie_print_server_cycles(&servers[0], &servers[1]);
    printf("}\n");
}

int bonnie_run_seeker(const struct bonnie_options *options)
{
    struct placement_info placement;
    long error = placement_get(&placement);
    if (error == 0)
        error = prepare_file(options);
    if (error != 0) {
        printf("bonnie: cannot prepare %s: %s\n", options->path, error_text(error));
        return 1;
    }
    long pids[64];
    uint32_t started = 0;
    for (; started < options->procs; started++) {
        uint32_t core = placement_app_core(&placement, started, options->procs);
        pids[started] = start_child(options, started, core);
        if (pids[started] < 0) {
            printf("bonnie: cannot start process %u on core %u: %s\n", started, core,
                   error_text(pids[started]));
            break;
        }
    }
    await_ready(started);
    struct bonnie_server_cycles servers[2];
    bonnie_server_cycles(&servers[0]);
    uint64_t start = read_timestamp_counter();
    for (uint32_t i = 0; i < started; i++)
        notify(pids[i]);
    bool all_ok = wait_children(pids, started);
    uint64_t cycles = read_timestamp_counter() - start;
    bonnie_server_cycles(&servers[1]);
    if (!all_ok || started != options->procs)
        return 1;
    print_result(options, &placement, cycles, servers);
    long synced = sync(); /* outside the timed part: the updates reach the disk */
    if (synced != 0)
        printf("bonnie: sync failed: %s\n", error_text(synced));
    return synced == 0 ? 0 : 1;
}
