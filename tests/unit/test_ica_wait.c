/* test_ica_wait.c: the wait protocol's transitions (kernel/ica/ica_wait.h,
 * ica_wait.c) on a process and a core record of the host: every row of the
 * header's table, the claims that must fail, and the waits for a claim (the
 * other core's sender is the inbox drain below, which ends its claim). */
#include <asm/prctl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "ica_wait.h"

#define ID 0x0000000100000007ull /* generation 1, control ICA 7 */
#define OTHER_ID 0x0000000200000007ull

static struct cpu core;
static struct process process;
uint32_t cpu_gs_moves;

/* What the sender on "another core" does when the waiting process's turn
 * drains its inbox: ends its claim of `word` by storing `value`. */
static _Atomic uint64_t *ending_word;
static uint64_t ending_value;
static unsigned drains;

unsigned intercore_drain(void)
{
    drains++;
    atomic_store_release(&core.inbox_hint, 0);
    if (ending_word != NULL)
        atomic_store_release(ending_word, ending_value);
    ending_word = NULL;
    return 0;
}

static int printed;
void kprintf(const char *format, ...)
{
    (void)format;
    printed++;
}

/* A claim held by another core, ended at the waiter's next turn. */
static void claim_ends_with(_Atomic uint64_t *word, uint64_t value)
{
    ending_word = word;
    ending_value = value;
    atomic_store_release(&core.inbox_hint, 1);
}

static int fresh(void **state)
{
    (void)state;
    memset(&process, 0, sizeof process);
    process.pid = 42;
    ending_word = NULL;
    drains = 0;
    printed = 0;
    return 0;
}

static void test_the_wake_is_claimed_once(void **state)
{
    (void)state;
    assert_false(ica_wake_claim_if_waiting(&process));
    ica_wait_announce(&process);
    assert_true(ica_wait_still_announced(&process));
    assert_true(ica_wake_claim(&process));
    assert_false(ica_wake_claim(&process));
    assert_false(ica_wait_still_announced(&process)); /* look again, never block */
    ica_wait_announce(&process);
    ica_wait_over(&process);
    assert_false(ica_wake_claim_if_waiting(&process));
}

static void test_a_park_and_its_end(void **state)
{
    (void)state;
    ica_park(&process, PARKED_IN_CALL, ID);
    ica_wait_announce(&process);
    assert_int_equal(process.parked, PARKED_IN_CALL);
    assert_int_equal(process.parked_for, ID);
    ica_unpark(&process);
    assert_int_equal(process.parked, PARKED_NOWHERE);
    assert_false(ica_wait_still_announced(&process));
    ica_park(&process, PARKED_IN_RECEIVE, 0);
    ica_park_leave(&process); /* the sender of its core switched to it */
    assert_int_equal(process.parked, PARKED_NOWHERE);
}

static void test_a_request_pasted_into_a_polling_server(void **state)
{
    (void)state;
    assert_false(ica_request_poll_claim(&process)); /* not polling */
    assert_true(ica_request_poll_arm(&process));
    assert_false(ica_request_poll_arm(&process));
    assert_true(ica_request_poll_claim(&process));
    assert_false(ica_request_poll_claim(&process)); /* one sender at a time */
    ica_request_poll_release(&process);
    assert_int_equal(process.polled_request, ICA_REQUEST_POLL_ARMED);
    assert_true(ica_request_poll_claim(&process));
    ica_request_poll_publish(&process, ID);
    assert_int_equal(ica_request_poll_end(&process), ID);
    assert_int_equal(process.polled_request, 0);
}

static void test_a_poll_that_ends_with_nothing(void **state)
{
    (void)state;
    assert_true(ica_request_poll_arm(&process));
    assert_int_equal(ica_request_poll_end(&process), 0);
    assert_false(ica_request_poll_claim(&process)); /* too late for a sender */
}

static void test_the_poll_waits_out_a_claim(void **state)
{
    (void)state;
    assert_true(ica_request_poll_arm(&process));
    assert_true(ica_request_poll_claim(&process));
    claim_ends_with(&process.polled_request, ID); /* the sender publishes */
    assert_int_equal(ica_request_poll_end(&process), ID);
    assert_int_equal(drains, 1);
}

static void test_a_request_pasted_into_a_parked_server(void **state)
{
    (void)state;
    assert_true(ica_request_park_claim(&process));
    assert_false(ica_request_park_claim(&process));
    ica_request_park_release(&process);
    assert_int_equal(process.polled_request, 0);
    assert_int_equal(ica_request_take_pasted(&process), 0);
    assert_true(ica_request_park_claim(&process));
    ica_request_poll_publish(&process, ID);
    assert_false(ica_request_park_claim(&process)); /* one published: no other */
    assert_false(ica_request_poll_arm(&process));   /* the receive takes it first */
    assert_false(ica_request_take_published(&process, OTHER_ID));
    assert_true(ica_request_take_published(&process, ID));
    assert_int_equal(process.polled_request, 0);
    assert_true(ica_request_park_claim(&process));
    ica_request_poll_publish(&process, ID);
    assert_int_equal(ica_request_take_pasted(&process), ID);
}

static void test_a_closed_process_is_claimed_no_more(void **state)
{
    (void)state;
    ica_wait_close(&process);
    assert_int_equal(process.polled_request, ICA_REQUEST_POLL_CLOSED);
    assert_false(ica_request_park_claim(&process));
    assert_false(ica_request_poll_claim(&process));
    assert_false(ica_request_poll_arm(&process));
    assert_int_equal(ica_request_take_pasted(&process), 0);
    assert_int_equal(process.polled_result, 0); /* no id is 0: no claim takes it */
    assert_false(ica_result_poll_claim(&process, ID));
    assert_int_equal(printed, 0);
}

static void test_the_close_waits_out_a_paste(void **state)
{
    (void)state;
    assert_true(ica_request_park_claim(&process));
    claim_ends_with(&process.polled_request, ID); /* pasted: the m-kernel answers it */
    ica_wait_close(&process);
    assert_int_equal(process.polled_request, ICA_REQUEST_POLL_CLOSED);
    assert_int_equal(drains, 1);
    assert_int_equal(printed, 1);
}

static void test_a_result_pasted_into_its_poller(void **state)
{
    (void)state;
    assert_false(ica_result_poll_claim(&process, ID)); /* not polling */
    ica_result_poll_arm(&process, ID);
    assert_false(ica_result_poll_claim(&process, OTHER_ID));
    assert_true(ica_result_poll_claim(&process, ID));
    assert_false(ica_result_poll_claim(&process, ID));
    ica_result_poll_release(&process, ID);
    assert_true(ica_result_poll_claim(&process, ID));
    ica_result_poll_pasted(&process);
    assert_int_equal(ica_result_poll_end(&process, ID), ICA_RESULT_PASTED);
    assert_int_equal(process.polled_result, 0);
}

static void test_the_other_ends_of_a_poll_for_a_result(void **state)
{
    (void)state;
    ica_result_poll_arm(&process, ID);
    assert_int_equal(ica_result_poll_end(&process, ID), ICA_RESULT_NOT_HANDED);
    assert_false(ica_hand_result_to_poller(&process, ID)); /* taken back */
    ica_result_poll_arm(&process, ID);
    assert_true(ica_hand_result_to_poller(&process, ID));
    assert_int_equal(ica_result_poll_end(&process, ID), ICA_RESULT_TRAVELLING);
    ica_result_poll_arm(&process, ID);
    assert_false(ica_result_poll_hand_server(&process, OTHER_ID, 9));
    assert_true(ica_result_poll_hand_server(&process, ID, 9));
    assert_int_equal(process.poll_handed_server, 9);
    assert_int_equal(ica_result_poll_end(&process, ID), ICA_RESULT_SERVER_WOKEN);
    assert_int_equal(process.polled_result, 0);
}

static void test_a_poll_for_a_result_waits_out_a_claim(void **state)
{
    (void)state;
    ica_result_poll_arm(&process, ID);
    assert_true(ica_result_poll_claim(&process, ID));
    claim_ends_with(&process.polled_result, ICA_RESULT_POLL_PASTED);
    assert_int_equal(ica_result_poll_end(&process, ID), ICA_RESULT_PASTED);
    assert_int_equal(drains, 1);
}

static void test_a_wake_handed_to_a_polling_core(void **state)
{
    (void)state;
    assert_false(ica_core_hand_wake(&core, 42)); /* not polling: a message */
    ica_core_poll_begin(&core);
    assert_true(ica_core_hand_wake(&core, 42));
    assert_false(ica_core_hand_wake(&core, 43)); /* the word holds one */
    ica_core_poll_end(&core);
    assert_int_equal(ica_core_take_woken(&core), 42);
    assert_int_equal(ica_core_take_woken(&core), 0);
}

static void test_the_direct_request_and_the_room(void **state)
{
    (void)state;
    ica_direct_request_put(&process, ID);
    assert_int_equal(ica_direct_request_take(&process), ID);
    assert_int_equal(ica_direct_request_take(&process), 0);
    ica_room_wait_begin(&process, 9);
    assert_int_equal(process.room_of_server, 9);
    ica_room_wait_end(&process);
    assert_int_equal(process.room_of_server, 0);
}

int main(void)
{
    core.self = &core;
    if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)&core) != 0)
        return 1; /* this_cpu() reads %gs:0 */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_the_wake_is_claimed_once, fresh),
        cmocka_unit_test_setup(test_a_park_and_its_end, fresh),
        cmocka_unit_test_setup(test_a_request_pasted_into_a_polling_server, fresh),
        cmocka_unit_test_setup(test_a_poll_that_ends_with_nothing, fresh),
        cmocka_unit_test_setup(test_the_poll_waits_out_a_claim, fresh),
        cmocka_unit_test_setup(test_a_request_pasted_into_a_parked_server, fresh),
        cmocka_unit_test_setup(test_a_closed_process_is_claimed_no_more, fresh),
        cmocka_unit_test_setup(test_the_close_waits_out_a_paste, fresh),
        cmocka_unit_test_setup(test_a_result_pasted_into_its_poller, fresh),
        cmocka_unit_test_setup(test_the_other_ends_of_a_poll_for_a_result, fresh),
        cmocka_unit_test_setup(test_a_poll_for_a_result_waits_out_a_claim, fresh),
        cmocka_unit_test_setup(test_a_wake_handed_to_a_polling_core, fresh),
        cmocka_unit_test_setup(test_the_direct_request_and_the_room, fresh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
