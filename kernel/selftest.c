/* selftest.c: every core's part in the all-pairs inter-core message test.
 * Asked by the m-kernel, a core sends ROUNDS numbered pings to every other
 * core, waits for everything addressed to it, then reports its counts to
 * the m-kernel (mkernel/selftest_driver.c checks and prints them). */
#include "selftest.h"
#include "intercore.h"
#include "shared.h"

static uint32_t rounds_requested[MAX_CORES];
static uint32_t received_from[MAX_CORES][MAX_CORES]; /* [receiver][sender] */
static uint64_t out_of_order[MAX_CORES];

uint64_t selftest_received(uint32_t core)
{
    uint64_t total = 0;
    for (uint32_t from = 0; from < kernel_shared->core_count; from++)
        total += received_from[core][from];
    return total;
}

uint64_t selftest_out_of_order(uint32_t core)
{
    return out_of_order[core];
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

uint64_t selftest_send_all(uint32_t rounds)
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

void selftest_wait_for_pings(uint32_t rounds)
{
    uint64_t expected = (uint64_t)rounds * (kernel_shared->core_count - 1);
    uint32_t self = this_cpu()->index;
    while (selftest_received(self) < expected)
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
    uint64_t sent = selftest_send_all(rounds);
    selftest_wait_for_pings(rounds);
    struct intercore_message done = {
        .type = MESSAGE_SELFTEST_DONE,
        .selftest_done = {selftest_received(self), out_of_order[self], sent},
    };
    intercore_send(MKERNEL_CORE, &done);
}
