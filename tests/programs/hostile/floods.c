/* floods.c: an account that tries to take a shared table or a server's
 * rings. `hostile icaflood CHILDREN HOLD_MS`: children of one account each
 * take data, then control ICAs until refused, and hold them HOLD_MS; the
 * parent reports what its account got (the kernel stops it at its share)
 * and ends, so the next command runs while the children hold.
 * `hostile ringflood CHILDREN MS [fs|blk|both]`: children on every core but core 0
 * each keep RING_BATCH requests in flight for MS milliseconds: FS requests of an
 * unknown operation (refused and logged) and BLK_WRITEs without the block
 * right (refused), more than an account's share of a ring, so they wait for
 * room (the parent samples ps's wait reason); none may fail with -E_BUSY.
 * `hostile hog CHILDREN MS`: CHILDREN `spin MS` of the account on the
 * caller's core, waited for: the account takes as much of the core as the
 * scheduler gives it (fair_queue.c: half, beside one other account). */
#include "floods.h"
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOOD_MAX_CHILDREN 64
#define RING_BATCH 48 /* more than an account's half of a 64-entry ring */
#define UNKNOWN_FS_OPERATION 999
#define SERVER_WAIT_MS 30000
#define FLOOD_SAMPLE_MS 20 /* how often the parent looks for a child waiting for room */

/* ICAs of `kind` allocated until the first refusal (its error in *error). */
static long take_until_refused(uint32_t kind, long *error)
{
    long count = 0, id = 0;
    while ((id = ica_allocate(kind, 4096)) >= 0)
        count++;
    *error = id;
    return count;
}

int hostile_ica_hold(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    long data_error = 0, control_error = 0;
    long data = take_until_refused(ICA_KIND_DATA, &data_error);
    long control = take_until_refused(ICA_KIND_CONTROL, &control_error);
    printf("@json {\"kind\":\"hostile_ica_child\",\"data\":%ld,\"data_error\":%ld,"
           "\"control\":%ld,\"control_error\":%ld}\n",
           data, data_error, control, control_error);
    notify(strtol(argv[3], NULL, 10));
    sleep_ms(strtoul(argv[2], NULL, 10));
    return 0;
}

/* What the caller's account holds now, summed over its processes (ps's view). */
static void report_account_icas(void)
{
    static struct process_info processes[PROCESS_LIST_MAX];
    long count = process_list(processes, PROCESS_LIST_MAX);
    uint32_t account = 0, me = (uint32_t)process_id();
    for (long i = 0; i < count; i++)
        if (processes[i].pid == me)
            account = processes[i].account;
    uint64_t control = 0, data = 0;
    for (long i = 0; i < count; i++)
        if (processes[i].account == account && processes[i].state != PROCESS_ZOMBIE) {
            control += processes[i].control_icas;
            data += processes[i].data_icas;
        }
    printf("@json {\"kind\":\"hostile_icas\",\"account\":%u,\"control\":%lu,\"data\":%lu}\n",
           account, control, data);
}

/* Spawns `count` children `arguments` (with the parent's pid appended) on
 * the caller's core; returns how many started. */
static long spawn_children(long *children, long count, const char *arguments)
{
    char line[ARGUMENTS_BYTES];
    snprintf(line, sizeof line, "%s %ld", arguments, process_id());
    long started = 0;
    for (long i = 0; i < count; i++) {
        long pid = spawn("hostile", line, (uint32_t)core_id(), PRIORITY_APPLICATION);
        if (pid > 0)
            children[started++] = pid;
    }
    return started;
}

static long wait_children(const long *children, long count)
{
    long failed = 0;
    for (long i = 0; i < count; i++) {
        int code = -1;
        wait_process(children[i], &code);
        failed += code != 0;
    }
    return failed;
}

int hostile_ica_flood(int argc, char **argv)
{
    static long children[FLOOD_MAX_CHILDREN];
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    if (count <= 0 || count > FLOOD_MAX_CHILDREN || argc < 4)
        return 2;
    char arguments[ARGUMENTS_BYTES];
    snprintf(arguments, sizeof arguments, "icahold %s", argv[3]);
    long started = spawn_children(children, count, arguments);
    for (long notified = 0; notified < started;)
        notified += await_notification();
    report_account_icas();
    return started == count ? 0 : 1; /* the children hold on after us */
}

/* One request the server refuses: an unknown FS operation, or a BLK_WRITE
 * from a sender without the block right. */
static void prepare_flood_request(uint64_t control, bool to_blk)
{
    if (!to_blk) {
        request_prepare(control, UNKNOWN_FS_OPERATION);
        return;
    }
    request_prepare(control, BLK_WRITE);
    *blk_write_of(ica_control_of(control)) =
        (struct blk_write_message){.first_block = 1, .blocks = 1};
}

struct ring_counts {
    uint64_t sent, busy, send_errors, wrong_results;
};

/* One round: RING_BATCH requests sent (each waits for room in the server's
 * ring when its account's share is full), then their results collected. */
static void flood_round(long server, const uint64_t *controls, bool to_blk,
                        struct ring_counts *counts)
{
    long expected = to_blk ? -E_PERMISSION : -E_INVALID;
    long in_flight = 0;
    for (long i = 0; i < RING_BATCH; i++) {
        prepare_flood_request(controls[i], to_blk);
        long error = ica_request(server, controls[i], 0);
        counts->busy += error == -E_BUSY;
        counts->send_errors += error != 0;
        in_flight += error == 0;
        counts->sent += error == 0;
    }
    for (long i = 0; i < in_flight; i++) {
        long control = ica_collect(0);
        if (control < 0 || ica_control_of((uint64_t)control)->result != expected)
            counts->wrong_results++;
    }
}

/* `ringchild MS fs|blk`: floods for MS milliseconds. */
int hostile_ring_child(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    bool to_blk = strcmp(argv[3], "blk") == 0;
    long server = server_wait_for(to_blk ? SERVER_NAME_BLK : SERVER_NAME_FS, SERVER_WAIT_MS);
    static uint64_t controls[RING_BATCH];
    for (long i = 0; i < RING_BATCH; i++) {
        long id = ica_allocate(ICA_KIND_CONTROL, 4096);
        if (id < 0 || server < 0)
            return 3;
        controls[i] = (uint64_t)id;
    }
    struct ring_counts counts = {0};
    uint64_t end = clock_microseconds() + strtoul(argv[2], NULL, 10) * 1000;
    while (clock_microseconds() < end)
        flood_round(server, controls, to_blk, &counts);
    printf("@json {\"kind\":\"hostile_ring\",\"server\":\"%s\",\"core\":%ld,\"sent\":%lu,"
           "\"busy\":%lu,\"send_errors\":%lu,\"wrong_results\":%lu}\n",
           to_blk ? "blk" : "fs", core_id(), counts.sent, counts.busy, counts.send_errors,
           counts.wrong_results);
    return counts.send_errors == 0 && counts.wrong_results == 0 ? 0 : 1;
}

/* Whether one of `children` waits for room in a server's ring right now. */
static bool one_waits_for_room(const long *children, long count)
{
    static struct process_info processes[PROCESS_LIST_MAX];
    long listed = process_list(processes, PROCESS_LIST_MAX);
    for (long i = 0; i < listed; i++)
        for (long j = 0; j < count; j++)
            if (processes[i].pid == (uint32_t)children[j] &&
                processes[i].wait_reason == PROCESS_WAIT_ICA_ROOM &&
                processes[i].state == PROCESS_WAITING)
                return true;
    return false;
}

static uint32_t flood_cores = 1;

/* Every core but core 0 (where the program under test runs), round robin. */
static uint32_t other_core(long child)
{
    return flood_cores > 1 ? 1 + (uint32_t)(child % (flood_cores - 1)) : 0;
}

int hostile_ring_flood(int argc, char **argv)
{
    static long children[FLOOD_MAX_CHILDREN];
    static struct core_info cores[FORMICA_MAX_CORES];
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    if (count <= 0 || count > FLOOD_MAX_CHILDREN || argc < 4)
        return 2;
    long listed = core_list(cores, FORMICA_MAX_CORES);
    flood_cores = listed > 0 ? (uint32_t)listed : 1;
    long started = 0;
    for (long i = 0; i < count; i++) {
        char arguments[ARGUMENTS_BYTES];
        const char *target = argc > 4 ? argv[4] : "both";
        bool to_blk = strcmp(target, "both") == 0 ? i % 2 == 1 : strcmp(target, "blk") == 0;
        snprintf(arguments, sizeof arguments, "ringchild %s %s", argv[3], to_blk ? "blk" : "fs");
        long pid = spawn("hostile", arguments, other_core(i / 2), PRIORITY_APPLICATION);
        if (pid > 0)
            children[started++] = pid;
    }
    uint64_t end = clock_microseconds() + strtoul(argv[3], NULL, 10) * 1000;
    long samples = 0, waiting = 0;
    for (; clock_microseconds() < end; samples++) {
        waiting += one_waits_for_room(children, started);
        sleep_ms(FLOOD_SAMPLE_MS);
    }
    long failed = wait_children(children, started);
    printf("@json {\"kind\":\"hostile_ring_flood\",\"children\":%ld,\"failed\":%ld,"
           "\"samples\":%ld,\"samples_waiting_for_room\":%ld}\n",
           started, failed, samples, waiting);
    return failed == 0 && started == count ? 0 : 1;
}

int hostile_core_hog(int argc, char **argv)
{
    static long children[FLOOD_MAX_CHILDREN];
    long count = argc > 3 ? strtol(argv[2], NULL, 10) : 0;
    if (count <= 0 || count > FLOOD_MAX_CHILDREN)
        return 2;
    long started = 0;
    for (long i = 0; i < count; i++) {
        long pid = spawn("spin", argv[3], (uint32_t)core_id(), PRIORITY_APPLICATION);
        if (pid > 0)
            children[started++] = pid;
    }
    long failed = wait_children(children, started);
    printf("@json {\"kind\":\"hostile_hog\",\"children\":%ld,\"failed\":%ld}\n", started, failed);
    return started == count && failed == 0 ? 0 : 1;
}
