/* requests.c: ICA handovers and server requests. Control ICAs carry random
 * operations with forged messages, data and lent lists naming ICAs the
 * fuzzer does not hold, a broken magic or a forged return stack; requests go
 * synchronously to the real servers (which always answer) and asynchronously
 * anywhere, and rings are flooded. Paths name only FUZZ_DIRECTORY, or are
 * not terminated, so no request can harm another program's files. */
#include "fuzz.h"
#include <formica/pager.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/syscalls.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

void ica_keep(struct fuzz *fuzz, uint64_t id)
{
    for (uint32_t i = 0; i < fuzz->held_count; i++)
        if (fuzz->held[i] == id)
            return;
    if (fuzz->held_count == FUZZ_HELD_ICAS) {
        fuzz_result(fuzz, "ica_free", ica_free(fuzz->held[0]), fuzz->held[0], 0, 0);
        ica_forget(fuzz, fuzz->held[0]);
    }
    fuzz->held[fuzz->held_count++] = id;
}

void ica_forget(struct fuzz *fuzz, uint64_t id)
{
    for (uint32_t i = 0; i < fuzz->held_count; i++) {
        if (fuzz->held[i] != id)
            continue;
        fuzz->held[i] = fuzz->held[--fuzz->held_count];
        return;
    }
}

static void allocate_call(struct fuzz *fuzz)
{
    uint32_t kind = (uint32_t)random_below(fuzz, 5);
    uint64_t bytes = random_chance(fuzz, 60) ? 4096ull << random_below(fuzz, 9) : pick_size(fuzz);
    long id = fuzz_result(fuzz, "ica_allocate", ica_allocate(kind, bytes), kind, bytes, 0);
    if (id > 0)
        ica_keep(fuzz, (uint64_t)id);
}

static void free_call(struct fuzz *fuzz)
{
    uint64_t id = pick_ica_id(fuzz);
    long result = fuzz_result(fuzz, "ica_free", ica_free(id), id, 0, 0);
    if (result == 0) {
        ica_forget(fuzz, id);
        fuzz->freed_id = id;
    }
}

/* A held control ICA, allocated when there is none. */
static long control_ica(struct fuzz *fuzz)
{
    for (uint32_t i = 0; i < fuzz->held_count; i++) {
        uint64_t id = fuzz->held[i];
        if (ica_kind(id) != ICA_KIND_CONTROL || !random_chance(fuzz, 50))
            continue;
        long held = syscall6(SYS_ICA_LEND_COUNT, (long)id, 0, 0, 0, 0, 0);
        if (held >= 0)
            return (long)id;
        printf("fuzz: control ICA 0x%lx is gone\n", (unsigned long)id);
        fuzz_print_history(fuzz, id);
        fuzz_anomaly(fuzz, "ica_lend_count", held, "a control ICA the fuzzer held is gone");
        ica_forget(fuzz, id);
        return held;
    }
    long id = fuzz_result(fuzz, "ica_allocate", ica_allocate(ICA_KIND_CONTROL, 4096), 1, 4096, 0);
    if (id > 0)
        ica_keep(fuzz, (uint64_t)id);
    return id;
}

static uint32_t pick_operation(struct fuzz *fuzz)
{
    static const uint32_t firsts[] = {FS_OPEN, BLK_READ, DK_READ, PAGER_FAULT};
    static const uint32_t counts[] = {14, 4, 4, 6};
    if (random_chance(fuzz, 10))
        return (uint32_t)random_next(fuzz);
    uint64_t server = random_below(fuzz, 4);
    uint32_t operation = firsts[server] + (uint32_t)random_below(fuzz, counts[server] + 1);
    if ((operation == FS_SYNC || operation == FS_FSYNC) && !random_chance(fuzz, 5))
        return FS_STAT; /* each sync waits for the disk: kept rare so runs stay short */
    return operation;
}

/* A path under FUZZ_DIRECTORY, a pair of them (rename), or no NUL at all. */
static void fill_payload(struct fuzz *fuzz, struct ica_control *page)
{
    char *payload = (char *)page->payload;
    if (random_chance(fuzz, 10)) {
        memset(payload, 'a' + (int)random_below(fuzz, 26), ICA_PAYLOAD_BYTES);
        return;
    }
    int length = snprintf(payload, ICA_PAYLOAD_BYTES, "%s/%c%u", FUZZ_DIRECTORY,
                          random_chance(fuzz, 70) ? 'f' : 'd', (unsigned)random_below(fuzz, 6));
    snprintf(payload + length + 1, ICA_PAYLOAD_BYTES - (unsigned)length - 1, "%s/f%u",
             FUZZ_DIRECTORY, (unsigned)random_below(fuzz, 6));
}

/* Random message bytes; handles and sizes drawn from the pools half the time. */
static void fill_message(struct fuzz *fuzz, struct ica_control *page)
{
    random_fill(fuzz, page->message, ICA_MESSAGE_BYTES);
    uint64_t *words = (uint64_t *)page->message;
    for (unsigned i = 0; i < ICA_MESSAGE_BYTES / 8; i++)
        if (random_chance(fuzz, 50))
            words[i] = random_chance(fuzz, 50) ? random_below(fuzz, 16) : pick_size(fuzz);
}

static void fill_lists(struct fuzz *fuzz, struct ica_control *page)
{
    page->data_count =
        random_chance(fuzz, 80) ? (uint32_t)random_below(fuzz, 3) : (uint32_t)random_next(fuzz);
    for (unsigned i = 0; i < ICA_MAX_ATTACHED; i++)
        page->data[i] = pick_ica_id(fuzz);
    page->lent_count = random_chance(fuzz, 80) ? 0 : (uint32_t)random_below(fuzz, 6);
    for (unsigned i = 0; i < ICA_MAX_ATTACHED; i++)
        page->lent[i] = pick_ica_id(fuzz);
    if (random_chance(fuzz, 10)) /* routing fields are the kernel's: forged ones must not count */
        random_fill(fuzz, &page->arrival, sizeof(uint32_t) * (5 + ICA_MAX_RETURNS));
    if (random_chance(fuzz, 5))
        page->magic = (uint32_t)random_next(fuzz);
}

/* Sends `control` to a real server and waits, or anywhere without waiting. */
static void send(struct fuzz *fuzz, uint64_t control)
{
    uint32_t flags =
        random_chance(fuzz, 90) ? (uint32_t)random_below(fuzz, 4) : (uint32_t)random_next(fuzz);
    long server = fuzz->servers[random_below(fuzz, 4)];
    bool forward = random_chance(fuzz, 10);
    if (random_chance(fuzz, 20)) {
        server = pick_pid(fuzz);
        flags &= ~ICA_SYNC; /* a process that is not a server might never answer */
    }
    long result = forward ? ica_forward(server, control, flags & ~ICA_SYNC)
                          : ica_request(server, control, flags);
    fuzz_result(fuzz, forward ? "ica_forward" : "ica_request", result, (uint64_t)server, control,
                flags);
    if (result < 0 || (!forward && (flags & ICA_SYNC)))
        return;                /* still held, or back with its result */
    ica_forget(fuzz, control); /* gone: comes back (if ever) through collect */
    for (unsigned i = 0; i < 4; i++)
        if (server == fuzz->servers[i] && !forward)
            fuzz->outstanding++; /* a real server always answers */
}

void fuzz_request(struct fuzz *fuzz)
{
    switch (random_below(fuzz, 6)) {
    case 0:
        allocate_call(fuzz);
        return;
    case 1:
        free_call(fuzz);
        return;
    default:
        break;
    }
    long control = control_ica(fuzz);
    if (control <= 0)
        return;
    struct ica_control *page = ica_control_of((uint64_t)control);
    request_prepare((uint64_t)control, pick_operation(fuzz));
    fill_message(fuzz, page);
    fill_payload(fuzz, page);
    if (random_chance(fuzz, 60))
        fill_lists(fuzz, page);
    send(fuzz, (uint64_t)control);
}

/* Many asynchronous requests to one server at once, then every result. */
void fuzz_flood(struct fuzz *fuzz)
{
    long server = fuzz->servers[random_below(fuzz, 4)];
    uint32_t count = 1 + (uint32_t)random_below(fuzz, 16);
    for (uint32_t i = 0; i < count; i++) {
        long control =
            fuzz_result(fuzz, "ica_allocate", ica_allocate(ICA_KIND_CONTROL, 4096), 1, 4096, 0);
        if (control <= 0)
            break;
        request_prepare((uint64_t)control, pick_operation(fuzz));
        fill_message(fuzz, ica_control_of((uint64_t)control));
        fill_payload(fuzz, ica_control_of((uint64_t)control));
        long result = fuzz_result(fuzz, "ica_request", ica_request(server, (uint64_t)control, 0),
                                  (uint64_t)server, (uint64_t)control, 0);
        if (result < 0)
            ica_free((uint64_t)control);
        else
            fuzz->outstanding++;
    }
    collect_outstanding(fuzz);
}

/* Waits for the results of the requests to real servers, which always
 * answer (a lost one hangs the fuzzer: a bug the test reports as a timeout).
 * Results of requests sent elsewhere come back (if ever) on the way. */
void collect_outstanding(struct fuzz *fuzz)
{
    while (fuzz->outstanding > 0) {
        long id = fuzz_result(fuzz, "ica_collect", ica_collect(0), 0, 0, 0);
        if (id <= 0)
            return;
        fuzz->outstanding--;
        fuzz_result(fuzz, "ica_free", ica_free((uint64_t)id), (uint64_t)id, 0, 0);
        ica_forget(fuzz, (uint64_t)id);
    }
}
