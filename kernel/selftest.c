/* selftest.c: all-pairs inter-core message test. Core 0 starts it; each
 * core sends, then waits for everything addressed to it, then reports its
 * counts to core 0, which checks N×(N-1)×ROUNDS messages arrived in order. */
#include "selftest.h"
#include "clock.h"
#include "console.h"
#include "intercore.h"
#include "shared.h"
#include "x86.h"

struct core_result {
    uint64_t received, out_of_order, sent;
    bool reported;
};

static uint32_t rounds_requested[MAX_CORES];
static uint32_t received_from[MAX_CORES][MAX_CORES]; /* [receiver][sender] */
static uint64_t out_of_order[MAX_CORES];
static struct core_result results[MAX_CORES]; /* filled on core 0 only */
static volatile uint32_t reports;

static uint64_t total_received(uint32_t core)
{
    uint64_t total = 0;
    for (uint32_t from = 0; from < kernel_shared->core_count; from++)
        total += received_from[core][from];
    return total;
}

void serve_selftest_start(const struct intercore_message *message,
                          const struct intercore_selftest_start_request *request)
{
    (void)message;
    rounds_requested[this_cpu()->index] = (uint32_t)request->rounds;
}

void serve_selftest_ping(const struct intercore_message *message,
                         const struct intercore_selftest_ping_request *request)
{
    uint32_t self = this_cpu()->index;
    if (request->sequence != received_from[self][message->from])
        out_of_order[self]++;
    received_from[self][message->from]++;
}

void serve_selftest_done(const struct intercore_message *message,
                         const struct intercore_selftest_done_request *request)
{
    results[message->from] =
        (struct core_result){request->received, request->out_of_order, request->sent, true};
    reports++;
}

/* Sends ROUNDS pings to every other core, interleaved so all pairs progress. */
static uint64_t send_all(uint32_t rounds)
{
    uint32_t self = this_cpu()->index, cores = kernel_shared->core_count;
    uint64_t sent = 0;
    for (uint32_t round = 0; round < rounds; round++) {
        for (uint32_t offset = 1; offset < cores; offset++) {
            struct intercore_message ping = {.type = MESSAGE_SELFTEST_PING,
                                             .selftest_ping = {round}};
            intercore_send((self + offset) % cores, &ping);
            sent++;
        }
    }
    return sent;
}

static void wait_for_pings(uint32_t rounds)
{
    uint64_t expected = (uint64_t)rounds * (kernel_shared->core_count - 1);
    uint32_t self = this_cpu()->index;
    while (total_received(self) < expected)
        if (intercore_poll() == 0)
            intercore_wait();
}

void selftest_run_pending(void)
{
    uint32_t self = this_cpu()->index;
    uint32_t rounds = rounds_requested[self];
    if (rounds == 0)
        return;
    rounds_requested[self] = 0;
    uint64_t sent = send_all(rounds);
    wait_for_pings(rounds);
    struct intercore_message done = {
        .type = MESSAGE_SELFTEST_DONE,
        .selftest_done = {total_received(self), out_of_order[self], sent},
    };
    intercore_send(0, &done);
}

static bool check_results(uint32_t rounds, uint64_t *messages)
{
    uint32_t cores = kernel_shared->core_count;
    uint64_t expected = (uint64_t)rounds * (cores - 1);
    bool ok = true;
    *messages = 0;
    for (uint32_t core = 0; core < cores; core++) {
        struct core_result *result = &results[core];
        *messages += result->received;
        if (result->received != expected || result->sent != expected || result->out_of_order != 0) {
            kprintf("selftest: core %u received %lu sent %lu (expected %lu), %lu out of order\n",
                    core, result->received, result->sent, expected, result->out_of_order);
            ok = false;
        }
    }
    return ok;
}

bool selftest_intercore(uint32_t rounds)
{
    uint32_t cores = kernel_shared->core_count;
    uint64_t start = rdtsc();
    for (uint32_t core = 1; core < cores; core++) {
        struct intercore_message message = {.type = MESSAGE_SELFTEST_START,
                                            .selftest_start = {rounds}};
        intercore_send(core, &message);
    }
    uint64_t sent = send_all(rounds);
    wait_for_pings(rounds);
    results[0] = (struct core_result){total_received(0), out_of_order[0], sent, true};
    while (reports < cores - 1)
        if (intercore_poll() == 0)
            intercore_wait();
    uint64_t cycles = rdtsc() - start;
    uint64_t messages, ipis = 0;
    bool ok = check_results(rounds, &messages);
    for (uint32_t core = 0; core < cores; core++)
        ipis += kernel_shared->cpus[core].ipis_sent;
    kprintf("@json {\"kind\":\"selftest\",\"name\":\"intercore\",\"cores\":%u,\"rounds\":%u,"
            "\"pairs\":%u,\"messages\":%lu,\"ipis\":%lu,\"elapsed_us\":%lu,\"ok\":%s}\n",
            cores, rounds, cores * (cores - 1), messages, ipis, clock_cycles_to_us(cycles),
            ok ? "true" : "false");
    return ok;
}
