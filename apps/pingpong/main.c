/* apps/pingpong ROUNDS [CORE_A CORE_B]: measures a notification round trip
 * between two processes on CORE_A and CORE_B (default: both on the caller's
 * core). See the roles below; the result is one "@json" pingpong line. */
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Roles:
 *  launcher  `pingpong ROUNDS A B` on a core other than A: starts
 *            `pingpong ROUNDS A B --placed` on core A, returns its exit code.
 *  initiator `pingpong ROUNDS A B [--placed]` on core A: starts the responder on core B,
 *            then ROUNDS times { notify(responder); await_notification(); },
 *            timing the rounds with the TSC, and waits for the responder.
 *  responder `pingpong --partner PID ROUNDS` on core B: ROUNDS times
 *            { await_notification(); notify(PID); }. */

#define PARTNER_FLAG "--partner"
#define PLACED_FLAG "--placed" /* the launcher already moved us: do not move again */

struct pingpong {
    long rounds;
    long core_a, core_b;
};

static int usage(void)
{
    printf("usage: pingpong ROUNDS [CORE_A CORE_B]\n");
    return 2;
}

static int run_responder(long initiator, long rounds)
{
    long received = 0;
    while (received < rounds) {
        long taken = await_notification();
        long error = taken < 0 ? taken : notify(initiator);
        if (error < 0) {
            printf("pingpong: the partner's round %ld failed: %s\n", received, error_text(error));
            return 1;
        }
        received += taken;
    }
    return 0;
}

/* Starts this very command on core A and returns its exit code. */
static int relaunch_on_core_a(const struct pingpong *setup)
{
    char arguments[ARGUMENTS_BYTES];
    snprintf(arguments, sizeof arguments, "%ld %ld %ld %s", setup->rounds, setup->core_a,
             setup->core_b, PLACED_FLAG);
    long result = spawn("pingpong", arguments, (uint32_t)setup->core_a, PRIORITY_APPLICATION);
    int exit_code = 1;
    if (result >= 0)
        result = wait_process(result, &exit_code);
    if (result < 0) {
        printf("pingpong: cannot run on core %ld: %s\n", setup->core_a, error_text(result));
        return 1;
    }
    return exit_code;
}

/* Runs the rounds against `responder`; returns how many completed. */
static long play_rounds(long responder, long rounds)
{
    long completed = 0;
    while (completed < rounds) {
        if (notify(responder) < 0 || await_notification() < 0)
            break;
        completed++;
    }
    return completed;
}

static int run_initiator(const struct pingpong *setup)
{
    char arguments[ARGUMENTS_BYTES];
    snprintf(arguments, sizeof arguments, "%s %ld %ld", PARTNER_FLAG, process_id(), setup->rounds);
    long responder = spawn("pingpong", arguments, (uint32_t)setup->core_b, PRIORITY_APPLICATION);
    if (responder < 0) {
        printf("pingpong: cannot start the partner on core %ld: %s\n", setup->core_b,
               error_text(responder));
        return 1;
    }
    uint64_t start = read_timestamp_counter();
    long completed = play_rounds(responder, setup->rounds);
    uint64_t cycles = read_timestamp_counter() - start;
    int responder_code = 1;
    long waited = wait_process(responder, &responder_code);
    int ok = completed == setup->rounds && waited >= 0 && responder_code == 0;
    printf("@json {\"kind\":\"pingpong\",\"rounds\":%ld,\"cores\":[%ld,%ld],"
           "\"cycles_per_round\":%lu,\"ok\":%s}\n",
           completed, setup->core_a, setup->core_b,
           completed > 0 ? cycles / (uint64_t)completed : 0, ok ? "true" : "false");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], PARTNER_FLAG) == 0)
        return run_responder(atoi(argv[2]), atoi(argv[3]));
    bool placed = argc == 5 && strcmp(argv[4], PLACED_FLAG) == 0;
    if (argc != 2 && argc != 4 && !placed)
        return usage();
    struct pingpong setup = {.rounds = atoi(argv[1]), .core_a = core_id()};
    setup.core_b = setup.core_a;
    if (argc >= 4) {
        setup.core_a = atoi(argv[2]);
        setup.core_b = atoi(argv[3]);
    }
    if (setup.rounds <= 0 || setup.core_a < 0 || setup.core_b < 0)
        return usage();
    if (core_id() != setup.core_a && !placed)
        return relaunch_on_core_a(&setup);
    if (core_id() != setup.core_a) {
        printf("pingpong: asked for core %ld, running on core %ld\n", setup.core_a, core_id());
        return 1;
    }
    return run_initiator(&setup);
}
