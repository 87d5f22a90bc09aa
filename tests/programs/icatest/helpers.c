/* helpers.c: the roles `icatest bad` starts in other processes: a server that
 * never receives, a process using ICAs it does not hold, ring fillers, a
 * requester that never collects, and processes touching memory they lost;
 * and the table of every role (lend.c's and lend_on.c's too). */
#include "icatest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SURVIVED_EXIT_CODE 3 /* a helper that should have been killed */

static uint64_t number(const char *text)
{
    return strtoul(text, NULL, 0);
}

/* `sink NAME`: registers, never receives; exits when notified. */
static int sink(char **argv)
{
    if (server_register(argv[0]) != 0)
        return 1;
    await_notification();
    return 0;
}

/* `use CONTROL DATA SERVER`: every use of the parent's ICAs is refused. */
static int use_foreign(char **argv)
{
    uint64_t control = number(argv[0]), data = number(argv[1]);
    long server = (long)number(argv[2]);
    bool ok = ica_request(server, control, ICA_SYNC) == -E_PERMISSION;
    ok &= ica_free(control) == -E_PERMISSION;
    ok &= ica_free(data) == -E_PERMISSION;
    long mine = ica_allocate(ICA_KIND_CONTROL, 4096);
    request_prepare((uint64_t)mine, IPC_ECHO);
    request_attach((uint64_t)mine, data);
    ok &= ica_request(server, (uint64_t)mine, ICA_SYNC) == -E_PERMISSION;
    ok &= ica_free((uint64_t)mine) == 0;
    return ok ? 0 : 1;
}

/* Allocates `count` control ICAs and sends them to `server` without waiting. */
static long send_async(long server, long count)
{
    for (long i = 0; i < count; i++) {
        long control = ica_allocate(ICA_KIND_CONTROL, 4096);
        if (control < 0)
            return control;
        request_prepare((uint64_t)control, IPC_ECHO);
        ipc_echo_of(ica_control_of((uint64_t)control))->value = (uint64_t)i;
        long error = ica_request(server, (uint64_t)control, 0);
        if (error != 0)
            return error;
    }
    return 0;
}

/* `fill SINK COUNT PARENT`: COUNT requests into the sink's ring; once told
 * the sink ended, collects them all, each answered with -E_SERVER_ENDED. */
static int fill(char **argv)
{
    long count = (long)number(argv[1]), parent = (long)number(argv[2]);
    if (send_async((long)number(argv[0]), count) != 0)
        return 1;
    notify(parent);
    await_notification();
    for (long i = 0; i < count; i++) {
        long control = ica_collect(0);
        if (control < 0 || ica_control_of((uint64_t)control)->result != -E_SERVER_ENDED)
            return 1;
        ica_free((uint64_t)control);
    }
    return 0;
}

/* `waitroom SINK`: one request into a ring whose share is full: it waits
 * for room, and ends -E_NOT_FOUND when the sink ends (exit 0 then). */
static int wait_for_room(char **argv)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0)
        return 2;
    request_prepare((uint64_t)control, IPC_ECHO);
    long error = ica_request((long)number(argv[0]), (uint64_t)control, 0);
    return error == -E_NOT_FOUND ? 0 : 1;
}

/* `timedforward SINK NAME`: a server that forwards the one request it gets
 * to the sink, whose ring is crowded, with ICA_TIMEOUT in the forward flags
 * and 50 ms: -E_BUSY after waiting them, the request still held; that outcome
 * goes back as the result (0 when so). */
static int timed_forward(char **argv)
{
    if (server_register(argv[1]) != 0)
        return 2;
    long control = ica_receive(0);
    if (control < 0)
        return 3;
    uint64_t start = clock_microseconds();
    long error =
        ica_forward_receive((long)number(argv[0]), (uint64_t)control, ICA_TIMEOUT, ICA_NO_WAIT, 50);
    bool waited = clock_microseconds() - start >= 40000; /* its 50 ms, to a tick */
    bool ok = error == -E_BUSY && ica_held((uint64_t)control) && waited;
    ica_control_of((uint64_t)control)->result = ok ? 0 : (error < 0 ? error : -E_INVALID);
    ica_return((uint64_t)control);
    return ok ? 0 : 1;
}

/* `flood SERVER COUNT PARENT`: COUNT requests whose results are never collected. */
static int flood(char **argv)
{
    long error = send_async((long)number(argv[0]), (long)number(argv[1]));
    notify((long)number(argv[2]));
    await_notification();
    return error == 0 ? 0 : 1;
}

/* `touch SERVER control|data`: hands an ICA over, then reads its old mapping. */
static int touch_after_handover(char **argv)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    long data = ica_allocate(ICA_KIND_DATA, 4096);
    request_prepare((uint64_t)control, IPC_ECHO);
    request_attach((uint64_t)control, (uint64_t)data);
    if (ica_request((long)number(argv[0]), (uint64_t)control, 0) != 0)
        return 1;
    uint64_t lost = strcmp(argv[1], "data") == 0 ? (uint64_t)data : (uint64_t)control;
    volatile uint32_t *old = ica_address(lost);
    printf("icatest: read after handover gave %u\n", *old);
    return SURVIVED_EXIT_CODE;
}

/* `peek ADDRESS`: reads an address where another process holds an ICA. */
static int peek(char **argv)
{
    volatile uint8_t *address = (volatile uint8_t *)number(argv[0]);
    printf("icatest: peek read %u\n", *address);
    return SURVIVED_EXIT_CODE;
}

struct role {
    const char *name;
    int arguments;
    int (*run)(char **argv);
};

static const struct role roles[] = {
    {"sink", 1, sink},
    {"use", 3, use_foreign},
    {"fill", 3, fill},
    {"waitroom", 1, wait_for_room},
    {"timedforward", 2, timed_forward},
    {"flood", 3, flood},
    {"touch", 2, touch_after_handover},
    {"peek", 1, peek},
    {"lendwrite", 1, lend_write_role},
    {"blocklend", 1, block_lender_role},
    {"lendon", 2, lend_on_middle_role},
    {"lendonpeek", 2, lend_on_peek_role},
};

int helper_main(int argc, char **argv)
{
    int published = argc >= 2 ? published_role(argv[0], argv + 1) : -1;
    if (published >= 0)
        return published;
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (strcmp(argv[0], roles[i].name) == 0 && argc - 1 >= roles[i].arguments)
            return roles[i].run(argv + 1);
    return 2;
}
