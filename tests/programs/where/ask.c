/* ask.c: the where client. Asks the instance server_lookup gives (the
 * nearest one) and then every instance by index, printing one @json line
 * per answer: the caller's core, the instance, its pid, core and starts. */
#include "where.h"
#include <formica/protocol/where.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

#define WHERE_WAIT_MS 30000 /* an instance init is restarting comes back well within this */

static uint64_t control;

/* Asks `pid`; prints the answer as asked `how` ("nearest" or "index"). */
static bool ask_one(long pid, const char *how, uint32_t index)
{
    request_prepare(control, WHERE_HERE);
    long result = pid < 0 ? pid : request_call(pid, control);
    if (result < 0) {
        printf("where ask: %s %u (pid %ld) failed: %s\n", how, index, pid, error_text(result));
        return false;
    }
    const struct where_here_message *answer = where_here_of(ica_control_of(control));
    printf("@json {\"kind\":\"where\",\"how\":\"%s\",\"caller_core\":%ld,\"pid\":%ld,"
           "\"instance\":%u,\"count\":%u,\"core\":%u,\"starts\":%u}\n",
           how, core_id(), pid, answer->instance, answer->count, answer->core, answer->starts);
    return true;
}

int where_ask(void)
{
    long allocated = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (allocated < 0) {
        printf("where ask: no control ICA: %s\n", error_text(allocated));
        return 1;
    }
    control = (uint64_t)allocated;
    long nearest = server_wait_for(SERVER_NAME_WHERE, WHERE_WAIT_MS);
    if (!ask_one(nearest, "nearest", 0))
        return 1;
    uint32_t count = where_here_of(ica_control_of(control))->count;
    bool all = true;
    for (uint32_t index = 0; index < count; index++)
        all = ask_one(server_wait_for_instance(SERVER_NAME_WHERE, index, WHERE_WAIT_MS), "index",
                      index) &&
              all;
    ica_free(control);
    return all ? 0 : 1;
}
