/* stress.c: `icatest stress CLIENTS REQUESTS CORES`: CLIENTS copies of
 * `icatest client` spread over CORES cores send synchronous and asynchronous
 * requests through a two-stage chain (ts1 -> ts2, direct return). */
#include "icatest.h"
#include <stdio.h>
#include <stdlib.h>

#define ASYNC_BATCH 4          /* control ICAs in flight at once in the async phase */
#define ASYNC_EVERY 25         /* one async batch per this many synchronous requests */
#define CLIENT_FAILURE_CAP 120 /* exit codes above this mean "killed" */
#define MISMATCHES_SHOWN 3

struct client {
    long server;
    uint64_t index, requests;
    uint64_t failures, busy;
};

static uint64_t argument_of(const struct client *client, uint64_t sequence)
{
    return client->index << 32 | sequence;
}

static void note_mismatch(struct client *client, uint64_t argument, long result)
{
    if (client->failures++ < MISMATCHES_SHOWN)
        printf("icatest client %lu: argument 0x%lx gave %ld\n", client->index, argument, result);
}

/* One synchronous request, sent again while the chain answers -E_BUSY. */
static void sync_request(struct client *client, uint64_t control, uint64_t argument)
{
    for (;;) {
        long result = ipc_call_echo(client->server, control, argument);
        struct ica_control *page = ica_control_of(control);
        if (result == -E_BUSY) {
            client->busy++;
            yield();
            continue;
        }
        if (result != (long)argument + 1 || page->origin != (uint32_t)process_id())
            note_mismatch(client, argument, result);
        return;
    }
}

/* Sends control `slot` of a batch without waiting; retries while the ring is full. */
static void async_send(struct client *client, uint64_t control, uint64_t slot, uint64_t argument)
{
    request_prepare(control, IPC_ECHO);
    struct ica_control *page = ica_control_of(control);
    page->tag = slot;
    ipc_echo_of(page)->value = argument;
    long error;
    while ((error = ica_request(client->server, control, 0)) == -E_BUSY) {
        client->busy++;
        yield();
    }
    if (error != 0)
        note_mismatch(client, argument, error);
}

/* ASYNC_BATCH requests in flight at once, collected in any order, matched by tag. */
static void async_batch(struct client *client, const uint64_t *controls, uint64_t first)
{
    uint64_t outstanding = 0;
    for (uint64_t slot = 0; slot < ASYNC_BATCH; slot++, outstanding++)
        async_send(client, controls[slot], slot, argument_of(client, first + slot));
    while (outstanding > 0) {
        long id = ica_collect(0);
        if (id < 0) {
            note_mismatch(client, 0, id);
            return;
        }
        struct ica_control *page = ica_control_of((uint64_t)id);
        uint64_t slot = page->tag;
        uint64_t argument = argument_of(client, first + slot);
        if (slot >= ASYNC_BATCH || controls[slot] != (uint64_t)id) {
            note_mismatch(client, 0, id);
            outstanding--;
        } else if (page->result == -E_BUSY) {
            client->busy++;
            async_send(client, (uint64_t)id, slot, argument);
        } else {
            if (page->result != (long)argument + 1 || ipc_echo_of(page)->value != argument)
                note_mismatch(client, argument, page->result);
            outstanding--;
        }
    }
}

/* `icatest client SERVER INDEX REQUESTS`: exit code = failures (capped). */
int client_main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    struct client client = {.server = strtol(argv[0], NULL, 10),
                            .index = strtoul(argv[1], NULL, 10),
                            .requests = strtoul(argv[2], NULL, 10)};
    uint64_t controls[ASYNC_BATCH + 1];
    for (uint32_t i = 0; i <= ASYNC_BATCH; i++)
        if ((long)(controls[i] = (uint64_t)ica_allocate(ICA_KIND_CONTROL, 4096)) < 0)
            return CLIENT_FAILURE_CAP;
    uint64_t sequence = 0;
    for (uint64_t done = 0; done < client.requests; done++) {
        sync_request(&client, controls[ASYNC_BATCH], argument_of(&client, sequence++));
        if (done % ASYNC_EVERY == ASYNC_EVERY - 1) {
            async_batch(&client, controls, sequence);
            sequence += ASYNC_BATCH;
        }
    }
    for (uint32_t i = 0; i <= ASYNC_BATCH; i++)
        ica_free(controls[i]);
    if (client.busy > 0 || client.failures > 0)
        printf("icatest client %lu: %lu requests, %lu failures, %lu busy retries\n", client.index,
               sequence, client.failures, client.busy);
    return client.failures > CLIENT_FAILURE_CAP ? CLIENT_FAILURE_CAP : (int)client.failures;
}

static uint64_t async_requests_of(uint64_t requests)
{
    return requests / ASYNC_EVERY * ASYNC_BATCH;
}

/* Starts the clients round robin over `cores` cores; returns how many started. */
static long start_clients(long server, long clients, long requests, uint32_t cores, long *pids)
{
    char arguments[ARGUMENTS_BYTES];
    for (long i = 0; i < clients; i++) {
        snprintf(arguments, sizeof arguments, "client %ld %ld %ld", server, i, requests);
        pids[i] = spawn("icatest", arguments, (uint32_t)(i % cores), PRIORITY_APPLICATION);
        if (pids[i] < 0) {
            printf("icatest: client %ld did not start: %s\n", i, error_text(pids[i]));
            return i;
        }
    }
    return clients;
}

/* Waits for every client; the number of failed requests (a killed client: all of its). */
static uint64_t wait_clients(long started, const long *pids, uint64_t per_client)
{
    uint64_t failures = 0;
    for (long i = 0; i < started; i++) {
        int code = -1;
        wait_process(pids[i], &code);
        if (code != 0)
            printf("icatest: client %ld exited with code %d\n", i, code);
        failures += (code >= 0 && code < CLIENT_FAILURE_CAP) ? (uint64_t)code : per_client;
    }
    return failures;
}

int stress_main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long clients = strtol(argv[0], NULL, 10), requests = strtol(argv[1], NULL, 10);
    uint32_t cores = (uint32_t)strtoul(argv[2], NULL, 10);
    if (clients <= 0 || clients > 200 || requests <= 0 || cores == 0 || cores > online_cores())
        return 2;
    struct ica_stats start, end, after_stop;
    ica_stats(&start);
    long s2 = start_server("ipcserver", "ts2", 2 % cores, "ts2");
    long s1 = start_server("ipcserver", "ts1 ts2 direct", 1 % cores, "ts1");
    if (s1 < 0 || s2 < 0)
        return report_case("stress_servers", false, s1 < 0 ? s1 : s2, 0) ? 0 : 1;
    long *pids = malloc(sizeof(long) * (size_t)clients);
    uint64_t began = now_us();
    long started = start_clients(s1, clients, requests, cores, pids);
    uint64_t per_client = (uint64_t)requests + async_requests_of((uint64_t)requests);
    uint64_t failures = wait_clients(started, pids, per_client);
    failures += (uint64_t)(clients - started) * per_client;
    uint64_t elapsed = now_us() - began;
    ica_stats(&end);
    bool stopped = stop_ipcserver(s1) == 0 && stop_ipcserver(s2) == 0;
    bool no_leak = pools_return_to(&start, 2000, &after_stop);
    bool ok = failures == 0 && stopped && no_leak;
    printf("@json {\"kind\":\"icatest\",\"case\":\"stress\",\"ok\":%s,\"clients\":%ld,"
           "\"cores\":%u,\"requests\":%lu,\"failures\":%lu,\"elapsed_us\":%lu,\"ipis\":%lu,"
           "\"handovers\":%lu,\"servers_stopped\":%s,\"control_free\":[%u,%u],"
           "\"data_free\":[%u,%u]}\n",
           ok ? "true" : "false", clients, cores, per_client * (uint64_t)clients, failures, elapsed,
           end.ipis - start.ipis, end.handovers - start.handovers, stopped ? "true" : "false",
           start.control_free, after_stop.control_free, start.data_free, after_stop.data_free);
    return ok ? 0 : 1;
}
