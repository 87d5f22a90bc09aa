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
/* Pings received, [receiver × core_count + sender]: core_count² words the m-kernel
 * allocates for the test (sized by the cores present, not MAX_CORES²). */
static uint32_t *received_counts;
static uint64_t out_of_order[MAX_CORES];
static struct core_result results[MAX_CORES]; /* filled on core 0 only */
static volatile uint32_t reports;

static uint32_t *received_from(uint32_t receiver, uint32_t sender)
{
    return &received_counts[(size_t)receiver * kernel_shared->core_count + sender];
}

static uint64_t total_received(uint32_t core)
{
    uint64_t total = 0;
    for (uint32_t from = 0; from < kernel_shared->core_count; from++)
        total += *received_from(core, from);
    return total;
}

static void on_start(const struct intercore_message *message)
{
    received_counts = (uint32_t *)message->argument[1];
    rounds_requested[this_cpu()->index] = (uint32_t)message->argument[0];
}

static void on_ping(const struct intercore_message *message)
{
    uint32_t *count = received_from(this_cpu()->index, message->from);
    if (message->argument[0] != *count)
        out_of_order[this_cpu()->index]++;
    (*count)++;
}

static void on_done(const struct intercore_message *message)
{
    results[message->from] = (struct core_result){message->argument[0], message->argument[1],
                                                  message->argument[2], true};
    reports++;
}

void selftest_install(void)
{
    intercore_set_handler(MESSAGE_SELFTEST_START, on_start);
    intercore_set_handler(MESSAGE_SELFTEST_PING, on_ping);
    intercore_set_handler(MESSAGE_SELFTEST_DONE, on_done);
}

/* Sends ROUNDS pings to every other core, interleaved so all pairs progress. */
static uint64_t send_all(uint32_t rounds)
{
    uint32_t self = this_cpu()->index, cores = kernel_shared->core_count;
    uint64_t sent = 0;
    for (uint32_t round = 0; round < rounds; round++) {
        for (uint32_t offset = 1; offset < cores; offset++) {
            struct intercore_message ping = {.type = MESSAGE_SELFTEST_PING};
            ping.argument[0] = round;
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
    struct intercore_message done = {.type = MESSAGE_SELFTEST_DONE};
    done.argument[0] = total_received(self);
    done.argument[1] = out_of_order[self];
    done.argument[2] = sent;
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

bool selftest_intercore(uint32_t rounds, uint32_t *counters)
{
    uint32_t cores = kernel_shared->core_count;
    received_counts = counters;
    uint64_t start = rdtsc();
    for (uint32_t core = 1; core < cores; core++) {
        struct intercore_message message = {.type = MESSAGE_SELFTEST_START};
        message.argument[0] = rounds;
        message.argument[1] = (uint64_t)counters;
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
    struct intercore_area *area = kernel_shared->intercore;
    kprintf("@json {\"kind\":\"selftest\",\"name\":\"intercore\",\"cores\":%u,\"rounds\":%u,"
            "\"pairs\":%u,\"messages\":%lu,\"ipis\":%lu,\"elapsed_us\":%lu,\"area_bytes\":%lu,"
            "\"area_entries\":%u,\"ok\":%s}\n",
            cores, rounds, cores * (cores - 1), messages, ipis, clock_cycles_to_us(cycles),
            intercore_area_memory(area), area->pairs, ok ? "true" : "false");
    return ok;
}
