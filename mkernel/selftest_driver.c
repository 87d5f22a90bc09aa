/* selftest_driver.c: the m-kernel starts the all-pairs inter-core test on
 * every p-kernel core, takes part itself, collects each core's report and
 * checks that N×(N-1)×ROUNDS messages arrived, in order. */
#include "selftest_driver.h"
#include "clock.h"
#include "console.h"
#include "intercore.h"
#include "selftest.h"
#include "shared.h"
#include "x86.h"

struct core_result {
    uint64_t received, out_of_order, sent;
    bool reported;
};

static struct core_result results[MAX_CORES];
static uint32_t reports; /* written and read on the m-kernel's core only */

void serve_selftest_done(const struct intercore_message *message,
                         const struct intercore_selftest_done_request *request)
{
    results[message->from] =
        (struct core_result){request->received, request->out_of_order, request->sent, true};
    reports++;
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

static void start_every_pkernel_core(uint32_t rounds)
{
    for (uint32_t core = FIRST_PKERNEL_CORE; core < kernel_shared->core_count; core++) {
        struct intercore_message message = {.type = MESSAGE_SELFTEST_START,
                                            .selftest_start = {rounds}};
        intercore_send(core, &message);
    }
}

bool selftest_intercore(uint32_t rounds)
{
    uint32_t cores = kernel_shared->core_count;
    uint64_t start = rdtsc();
    start_every_pkernel_core(rounds);
    uint64_t sent = selftest_send_all(rounds);
    selftest_wait_for_pings(rounds);
    results[MKERNEL_CORE] = (struct core_result){selftest_received(MKERNEL_CORE),
                                                 selftest_out_of_order(MKERNEL_CORE), sent, true};
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
