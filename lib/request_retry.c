/* request_retry.c: synchronous requests that outlive a restart of their
 * server. A server that ends sends every request it had not answered back
 * with -E_SERVER_ENDED, and a request to a pid that has ended fails with
 * -E_NOT_FOUND; init meanwhile restarts the server under the same name
 * (apps/init/reincarnation.c). The caller's prepare function fills the
 * control ICA again before each attempt, so an operation that may be
 * repeated (a read, a write at a given place) is retried with the new
 * server, a bounded number of times (docs/recovery.md). A request to one
 * instance of a server (a BLK shard) goes to the restarted instance. */
#include <formica/instance.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

#define RECONNECT_POLL_MS 10

long server_reconnect(const char *name, long gone)
{
    for (uint64_t waited = 0; waited < SERVER_RESTART_WAIT_MS; waited += RECONNECT_POLL_MS) {
        long pid = server_lookup(name);
        if (pid >= 0 && pid != gone)
            return pid;
        sleep_ms(RECONNECT_POLL_MS);
    }
    printf("pid %ld: server '%s' did not come back within %u ms\n", process_id(), name,
           SERVER_RESTART_WAIT_MS);
    return -E_SERVER_ENDED;
}

/* The restarted server: instance `index` of `name`, or for NEAREST_INSTANCE
 * the one server_lookup answers. */
#define NEAREST_INSTANCE UINT32_MAX
static long reconnect(const char *name, uint32_t index, long gone)
{
    if (index == NEAREST_INSTANCE)
        return server_reconnect(name, gone);
    return server_reconnect_instance(name, index, gone);
}

/* request_call_retrying_after to instance `index` of `name`. */
static long call_retrying(const char *name, uint32_t index, long *server, uint64_t control,
                          long (*prepare)(void *context), void *context, uint32_t attempts)
{
    for (uint32_t attempt = attempts;; attempt++) {
        if (attempt > 0) { /* the last attempt's server ended before answering */
            if (attempt > REQUEST_RETRIES)
                return -E_SERVER_ENDED;
            long next = reconnect(name, index, *server);
            if (next < 0)
                return next;
            *server = next;
        }
        long error = prepare(context), result;
        if (error != 0)
            return error;
        if (request_call_answered(*server, control, &result))
            return result;
    }
}

long request_call_retrying(const char *name, long *server, uint64_t control,
                           long (*prepare)(void *context), void *context)
{
    return call_retrying(name, NEAREST_INSTANCE, server, control, prepare, context, 0);
}

long request_call_retrying_after(const char *name, long *server, uint64_t control,
                                 long (*prepare)(void *context), void *context, uint32_t attempts)
{
    return call_retrying(name, NEAREST_INSTANCE, server, control, prepare, context, attempts);
}

long request_call_retrying_instance(const char *name, uint32_t index, long *server,
                                    uint64_t control, long (*prepare)(void *context), void *context)
{
    return call_retrying(name, index, server, control, prepare, context, 0);
}
