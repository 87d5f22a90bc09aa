/* test_kept_answers.c: FS's kept answers (servers/fs/kept_answers.c): a
 * client's last answer is found and replaced, the oldest is dropped for
 * room, ended clients are forgotten, and a request sent again is replayed,
 * done, or refused as unknown exactly when it should be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kept_answers.h"

static struct kept_answers answers;

static int set_up(void **state)
{
    (void)state;
    kept_answers_init(&answers);
    return 0;
}

static void store(uint32_t client, uint64_t tag, int64_t result)
{
    struct kept_answer answer = {.client = client, .operation = 8, .tag = tag, .result = result};
    memset(answer.message, (int)tag, sizeof answer.message);
    kept_answers_store(&answers, &answer);
}

static void test_last_answer_per_client(void **state)
{
    (void)state;
    store(7, 1, 0);
    store(9, 1, -3);
    store(7, 2, 12);
    const struct kept_answer *seven = kept_answers_find(&answers, 7);
    assert_non_null(seven);
    assert_int_equal(seven->tag, 2);
    assert_int_equal(seven->result, 12);
    assert_int_equal(seven->message[0], 2);
    assert_int_equal(kept_answers_find(&answers, 9)->result, -3);
    assert_null(kept_answers_find(&answers, 8));
    assert_null(kept_answers_find(&answers, 0));
}

static void test_resent_request_decisions(void **state)
{
    (void)state;
    store(7, 5, 0);
    /* answered before the restart: replayed, whatever `complete` says */
    assert_int_equal(kept_answers_decide(&answers, 7, 5, 8, true), KEPT_ANSWER_REPLAY);
    assert_int_equal(kept_answers_decide(&answers, 7, 5, 8, false), KEPT_ANSWER_REPLAY);
    /* another operation under that number is not the same request */
    assert_int_equal(kept_answers_decide(&answers, 7, 5, 9, true), KEPT_ANSWER_EXECUTE);
    /* newer than the kept answer: not done if the kept state is whole */
    assert_int_equal(kept_answers_decide(&answers, 7, 6, 8, true), KEPT_ANSWER_EXECUTE);
    assert_int_equal(kept_answers_decide(&answers, 7, 6, 8, false), KEPT_ANSWER_UNKNOWN);
    /* older than the kept answer: cannot be the request in flight */
    assert_int_equal(kept_answers_decide(&answers, 7, 4, 8, true), KEPT_ANSWER_UNKNOWN);
    /* a client with no answer kept, none dropped */
    assert_int_equal(kept_answers_decide(&answers, 11, 1, 8, true), KEPT_ANSWER_EXECUTE);
}

static void test_oldest_dropped_for_room(void **state)
{
    (void)state;
    for (uint32_t client = 1; client <= KEPT_ANSWERS_MAX; client++)
        store(client, 1, client);
    assert_int_equal(answers.dropped, 0);
    store(KEPT_ANSWERS_MAX + 1, 1, 0);
    assert_int_equal(answers.dropped, 1);
    assert_null(kept_answers_find(&answers, 1)); /* the oldest went */
    assert_non_null(kept_answers_find(&answers, 2));
    assert_non_null(kept_answers_find(&answers, KEPT_ANSWERS_MAX + 1));
    /* a client whose answer may have been dropped: unknown */
    assert_int_equal(kept_answers_decide(&answers, 1, 2, 8, true), KEPT_ANSWER_UNKNOWN);
}

static void test_ended_clients_forgotten(void **state)
{
    (void)state;
    store(3, 1, 0);
    store(5, 1, 0);
    store(8, 1, 0);
    const uint32_t alive[] = {1, 5, 9};
    kept_answers_forget_dead(&answers, alive, 3);
    assert_null(kept_answers_find(&answers, 3));
    assert_non_null(kept_answers_find(&answers, 5));
    assert_null(kept_answers_find(&answers, 8));
    store(12, 1, 0); /* a freed entry is reused, nothing dropped */
    assert_int_equal(answers.dropped, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_last_answer_per_client, set_up),
        cmocka_unit_test_setup(test_resent_request_decisions, set_up),
        cmocka_unit_test_setup(test_oldest_dropped_for_room, set_up),
        cmocka_unit_test_setup(test_ended_clients_forgotten, set_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
