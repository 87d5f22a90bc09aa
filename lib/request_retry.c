/* request_retry.c: synchronous requests that outlive a restart of their
 * server. A server that ends sends every request it had not answered back
 * with -E_SERVER_ENDED, and a request to a pid that has ended fails with
 * -E_NOT_FOUND; init meanwhile restarts the server under the same name
 * (apps/init/reincarnation.c). The caller's prepare function fills the
 * control ICA again before each attempt, so an operation that may be
 * repeated (a read, a write at a given place) is retried with the new
 * server, a bounded number of times (docs/recovery.md). A request to one
 * instance of a server (a BLK shard) goes to the restarted instance; one
 * whose instance is alive but a server behind it ended goes to the same
 * instance again. */
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

/* Who a failed attempt's -E_SERVER_ENDED came from: the `sender` the kernel
 * wrote when the control ICA came back (the server that ended, or the one
 * that answered so itself), or NOT_SENT when it never reached a server (a
 * pid already gone: -E_NOT_FOUND). */
#define NOT_SENT (-1L)
static long ended_by(long sent, uint64_t control)
{
    const struct ica_control *page = ica_control_of(control);
    if (sent != 0 || page->arrival != ICA_ARRIVED_AS_RESULT)
        return NOT_SENT;
    return page->sender;
}

/* The server to send the request to again. The kernel takes an ended
 * server's name away before it sends its requests back, so when the
 * instance asked is still registered, what ended was a server further on
 * (the owner behind an FS replica, BLK behind FS): it is asked again at
 * once, as often as the server behind it restarts. If it answered
 * -E_SERVER_ENDED itself (FS that cannot tell whether a resent request was
 * done, a replica whose owner did not come back), that is its answer.
 * Otherwise its restarted process is waited for. */
static long server_to_ask_again(const char *name, uint32_t index, long server, long ended)
{
    if (ended != NOT_SENT && server >= 0) {
        long registered =
            index == NEAREST_INSTANCE ? server_lookup(name) : server_lookup_instance(name, index);
        if (registered == server)
            return ended == server ? -E_SERVER_ENDED : server;
    }
    return reconnect(name, index, server);
}

/* request_call_retrying_after to instance `index` of `name`. A caller's own
 * attempts cleared the control's arrival before sending (so ended_by can
 * tell whether the last one came back). */
static long call_retrying(const char *name, uint32_t index, long *server, uint64_t control,
                          long (*prepare)(void *context), void *context, uint32_t attempts)
{
    long ended = attempts > 0 ? ended_by(0, control) : NOT_SENT;
    for (uint32_t attempt = attempts;; attempt++) {
        if (attempt > 0) { /* the last attempt's server ended before answering */
            if (attempt > REQUEST_RETRIES)
                return -E_SERVER_ENDED;
            long next = server_to_ask_again(name, index, *server, ended);
            if (next < 0)
                return next;
            *server = next;
        }
        long error = prepare(context);
        if (error != 0)
            return error;
        long sent = *server < 0 ? -E_NOT_FOUND : ica_request(*server, control, ICA_SYNC);
        if (!request_server_ended(sent, control))
            return sent != 0 ? sent : ica_control_of(control)->result;
        ended = ended_by(sent, control);
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
