/* hammer.c: `where hammer MS`, the client that keeps the nearest where
 * instance busy for MS milliseconds while a test kills and crashes it
 * (tests/integration/test_ica.py). Every request must come back answered
 * or with a clean "server ended" (then the restarted instance is asked
 * next), never hang or fail otherwise; one @json line sums it up. */
#include "where.h"
#include <formica/protocol/where.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

#define WHERE_WAIT_MS 30000 /* an instance init is restarting comes back well within this */
#define FAILURES_SHOWN 3

struct hammer_counts {
    uint64_t sent, answered, ended, failed, wrong, servers;
};

/* One WHERE_HERE to `pid`; counts how it came back. False when the
 * server ended before answering (the caller reconnects). */
static bool hammer_once(long pid, uint64_t control, struct hammer_counts *counts)
{
    request_prepare(control, WHERE_HERE);
    long error = ica_request(pid, control, ICA_SYNC);
    counts->sent++;
    if (request_server_ended(error, control)) {
        counts->ended++;
        return false;
    }
    long result = error != 0 ? error : ica_control_of(control)->result;
    const struct where_here_message *answer = where_here_of(ica_control_of(control));
    if (result < 0) {
        if (counts->failed++ < FAILURES_SHOWN)
            printf("where hammer: pid %ld failed: %s\n", pid, error_text(result));
    } else if ((uint32_t)result != answer->instance) {
        if (counts->wrong++ < FAILURES_SHOWN)
            printf("where hammer: pid %ld answered %ld for instance %u\n", pid, result,
                   answer->instance);
    } else {
        counts->answered++;
    }
    return true;
}

int where_hammer(uint64_t milliseconds)
{
    long allocated = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (allocated < 0) {
        printf("where hammer: no control ICA: %s\n", error_text(allocated));
        return 1;
    }
    uint64_t control = (uint64_t)allocated;
    struct hammer_counts counts = {0};
    long pid = server_wait_for(SERVER_NAME_WHERE, WHERE_WAIT_MS);
    counts.servers = pid >= 0;
    uint64_t end = clock_microseconds() + milliseconds * 1000;
    while (pid >= 0 && clock_microseconds() < end) {
        if (hammer_once(pid, control, &counts))
            continue;
        pid = server_reconnect(SERVER_NAME_WHERE, pid);
        counts.servers += pid >= 0;
    }
    if (pid < 0)
        printf("where hammer: no where server: %s\n", error_text(pid));
    ica_free(control);
    printf("@json {\"kind\":\"where_hammer\",\"caller_core\":%ld,\"sent\":%lu,\"answered\":%lu,"
           "\"ended\":%lu,\"failed\":%lu,\"wrong\":%lu,\"servers\":%lu}\n",
           core_id(), (unsigned long)counts.sent, (unsigned long)counts.answered,
           (unsigned long)counts.ended, (unsigned long)counts.failed, (unsigned long)counts.wrong,
           (unsigned long)counts.servers);
    return pid >= 0 && counts.failed == 0 && counts.wrong == 0 && counts.answered > 0 ? 0 : 1;
}
