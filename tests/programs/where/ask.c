/* ask.c: the where client. Asks the instance server_lookup gives (the
 * nearest one) and then every instance by index, printing one @json line
 * per answer: the caller's core, the instance, its pid, core and starts;
 * then has the nearest one try other names' kept regions. A
 * request that meets an instance being killed is sent again to the
 * restarted one, as every client of a restarted server does. */
#include "where.h"
#include <formica/protocol/where.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

#define WHERE_WAIT_MS 30000 /* an instance init is restarting comes back well within this */

static uint64_t control;

/* A lookup: the nearest instance, or instance `index`. */
static long look_up(bool nearest, uint32_t index)
{
    return nearest ? server_wait_for(SERVER_NAME_WHERE, WHERE_WAIT_MS)
                   : server_wait_for_instance(SERVER_NAME_WHERE, index, WHERE_WAIT_MS);
}

/* One WHERE_HERE to the instance a lookup gives; when its process ended
 * before answering (a kill on its way), once more to the restarted one. */
static long ask_instance(bool nearest, uint32_t index, long *pid)
{
    *pid = look_up(nearest, index);
    long result = -E_SERVER_ENDED;
    for (int attempt = 0; attempt < 2 && *pid >= 0; attempt++) {
        request_prepare(control, WHERE_HERE);
        result = request_call(*pid, control);
        if (result != -E_SERVER_ENDED && result != -E_NOT_FOUND)
            return result;
        long gone = *pid;
        *pid = nearest ? server_reconnect(SERVER_NAME_WHERE, gone)
                       : server_reconnect_instance(SERVER_NAME_WHERE, index, gone);
    }
    return *pid < 0 ? *pid : result;
}

/* Asks and prints the answer as asked `how` ("nearest" or "index"). */
static bool ask_one(bool nearest, uint32_t index)
{
    const char *how = nearest ? "nearest" : "index";
    long pid;
    long result = ask_instance(nearest, index, &pid);
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

/* The nearest instance's try at other names' kept regions. */
static bool probe_kept_regions(void)
{
    long pid = server_wait_for(SERVER_NAME_WHERE, WHERE_WAIT_MS);
    request_prepare(control, WHERE_KEPT_PROBE);
    long result = pid < 0 ? pid : request_call(pid, control);
    const struct where_kept_probe_message *answer = where_kept_probe_of(ica_control_of(control));
    printf("@json {\"kind\":\"where_kept_probe\",\"caller_core\":%ld,\"pid\":%ld,\"result\":%ld,"
           "\"refused\":%u,\"own\":%d}\n",
           core_id(), pid, result, result == 0 ? answer->refused : 0,
           result == 0 ? answer->own : 0);
    return result == 0;
}

int where_ask(void)
{
    long allocated = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (allocated < 0) {
        printf("where ask: no control ICA: %s\n", error_text(allocated));
        return 1;
    }
    control = (uint64_t)allocated;
    if (!ask_one(true, 0))
        return 1;
    uint32_t count = where_here_of(ica_control_of(control))->count;
    bool all = true;
    for (uint32_t index = 0; index < count; index++)
        all = ask_one(false, index) && all;
    all = probe_kept_regions() && all;
    ica_free(control);
    return all ? 0 : 1;
}
